"""The Python side of seqgrad's runs, built on one precision's C++ module (seqgrad._core or
seqgrad._core_f64): train with a progress bar, load a run, translate, explain, score, explore."""

import html
import json
import os
import sys
import time


def _in_notebook():
    """True inside Jupyter (an IPython kernel), where HTML can be displayed."""
    try:
        from IPython import get_ipython
    except ImportError:
        return False
    shell = get_ipython()
    return shell is not None and type(shell).__name__ == "ZMQInteractiveShell"


class ProgressBar:
    """A tqdm-style bar without tqdm: an HTML <progress> updated in place in a notebook, a line
    rewritten on stderr elsewhere. Called with the trainer's progress records."""

    def __init__(self, notebook=None):
        self.notebook = _in_notebook() if notebook is None else notebook
        self.handle = None
        self.last_draw = 0.0

    def text(self, p):
        eta = p["elapsed_s"] / max(p["step"], 1) * (p["total_steps"] - p["step"])
        return "epoch {} step {}/{} loss {:.4f} |g| {:.2f} {:.0f} tok/s ETA {:.0f} s".format(
            p["epoch"], p["step"], p["total_steps"], p["loss"], p["grad_norm"],
            p["tokens_per_s"], eta)

    def __call__(self, p):
        if self.notebook:
            from IPython.display import HTML, display
            page = '<progress value="{}" max="{}" style="width:40%"></progress> <code>{}</code>'.format(
                p["step"], p["total_steps"], html.escape(self.text(p)))
            if self.handle is None:
                self.handle = display(HTML(page), display_id=True)
            else:
                self.handle.update(HTML(page))
        else:
            now = time.monotonic()
            if now - self.last_draw > 0.2 or p["step"] >= p["total_steps"]:
                sys.stderr.write("\r" + self.text(p))
                sys.stderr.flush()
                self.last_draw = now

    def close(self):
        if not self.notebook and self.last_draw:
            sys.stderr.write("\n")


def _override_strings(overrides):
    """{"train.epochs": 2} or train__epochs=2 -> ["train.epochs=2"] (values as JSON)."""
    return ["{}={}".format(key.replace("__", "."), json.dumps(value))
            for key, value in overrides.items()]


class Explorer:
    """The explorer page of one or more runs; Jupyter shows it inline, in an iframe whose srcdoc
    holds the whole self-contained page (no server, no network)."""

    def __init__(self, page, height=720):
        self.html = page
        self.height = height

    def _repr_html_(self):
        return ('<iframe srcdoc="{}" style="width:100%;height:{}px;border:1px solid #ddd" '
                'sandbox="allow-scripts allow-same-origin"></iframe>').format(
                    html.escape(self.html, quote=True), self.height)

    def save(self, path):
        """Writes the page to `path` (open it in any browser)."""
        tmp = path + ".tmp"
        with open(tmp, "w", encoding="utf-8") as f:
            f.write(self.html)
        os.replace(tmp, path)
        return path


def attach(namespace, core):
    """Adds the run API built on `core` to `namespace` (a module's globals)."""

    class Run:
        """A trained run loaded from its directory: translate, saliency, gradflow, eval."""

        def __init__(self, run_dir, checkpoint="best", summary=None):
            self._run = core._load_run(os.fspath(run_dir), checkpoint)
            self.summary = summary  # what train() returned, for a run just trained

        @property
        def run_dir(self):
            return self._run.run_dir

        @property
        def config(self):
            return self._run.config

        def translate(self, sentences, beam=5, nbest=1, alpha=None, max_length=None):
            """A Translation (text, nbest hypotheses with scores and numpy attention) for one
            sentence, or a list of them for a list."""
            one = isinstance(sentences, str)
            out = self._run._translate([sentences] if one else list(sentences), beam, nbest,
                                       alpha, max_length)
            return out[0] if one else out

        def saliency(self, sentence, method="grad_norm", beam=1, steps=32):
            """How much each source token mattered to each output token of the translation:
            {"saliency": numpy [T, S], "attention": numpy [T, S], tokens...}. method:
            grad_norm, grad_input or integrated_gradients (steps: its midpoint steps)."""
            return self._run._saliency(sentence, method, beam, steps)

        def gradflow(self, sentence, target=None):
            """The gradient of the teacher-forced loss at every source position: through
            attention ("direct"), through the recurrence ("recurrent"), at the embeddings, and
            per module. target: the reference (default: the model's own translation)."""
            return self._run._gradflow(sentence, target)

        def eval(self, metrics="all", beam=1, limit=None):
            """Decodes the test split and scores it: {"scores": {name: value}, "lines": the
            sacreBLEU lines, "exact_match" (dates), hypotheses and references}."""
            return self._run._eval(metrics, beam, limit)

        def explore(self, **options):
            return explore(self, **options)

        def __repr__(self):
            return "Run({!r})".format(self.run_dir)

    def train(config, progress=True, quiet=True, **overrides):
        """Trains from a config (a path to a JSON file, or a dict) with overrides
        (train.epochs=2 as **{"train.epochs": 2} or train__epochs=2) and returns the Run.
        progress: True (a bar), False, or a function called with each progress record.
        Ctrl-C (or the notebook's interrupt) stops after the current step, as in the CLI."""
        bar = ProgressBar() if progress is True else None
        callback = bar if bar is not None else (progress if callable(progress) else None)
        if isinstance(config, os.PathLike):
            config = os.fspath(config)
        try:
            summary = core._train(config, _override_strings(overrides), callback, quiet)
        finally:
            if bar is not None:
                bar.close()
        if summary["interrupted"]:
            print("seqgrad.train: interrupted after step {}; the run's last checkpoint is in {}"
                  .format(summary["steps"], summary["run_dir"]), file=sys.stderr)
        return Run(summary["run_dir"], summary=summary)

    def load_run(run_dir, checkpoint="best"):
        """A trained run from its directory (checkpoint: best, or last)."""
        return Run(run_dir, checkpoint)

    def explore(runs, limit=20, beam=5, gradients=True, checkpoint="best", test=None,
                input=None, height=720):
        """The explorer of one run or several side by side (Run objects or directories), shown
        inline by Jupyter; .save(path) writes the file."""
        if isinstance(runs, (str, os.PathLike, Run)):
            runs = [runs]
        dirs = [r.run_dir if isinstance(r, Run) else os.fspath(r) for r in runs]
        return Explorer(core._explore(dirs, checkpoint, limit, beam, gradients, test, input),
                        height)

    def gradflow_study(**options):
        """The gradient-flow study of `seqgrad gradflow` on fresh models: options are its
        flags (attention=["none", "bahdanau"], lengths=[5, 10, 20], seeds=1, ...). Returns
        {"curves": [{"model", "stage", "length", "hidden": numpy [L], ...}], "summary"}."""
        argv = []
        for key, value in options.items():
            if isinstance(value, (list, tuple)):
                value = ",".join(str(v) for v in value)
            argv += ["--" + key.replace("_", "-"), str(value)]
        return core._gradflow_study(argv)

    namespace.update(Run=Run, train=train, load_run=load_run, explore=explore,
                     gradflow_study=gradflow_study, Explorer=Explorer, ProgressBar=ProgressBar)
