// `seqgrad explore RUN_DIR --live`: the explore page with the engine inside. Beside the file's
// data block, the page holds (apps/explore/live/page/*.js reads them):
//   glue         the engine's JavaScript (build-wasm/seqgrad_live.js), base64
//   wasm         the engine's module (build-wasm/seqgrad_live.wasm), base64, instantiated from
//                these bytes in a Web Worker
//   gzip         true when glue and wasm are the build's gzip copies (seqgrad_live.*.gz: a
//                third of the size), which the page unpacks with the browser's DecompressionStream
//   files        the run as the engine loads it (config.json, vocabularies or BPE codes,
//                best.safetensors with the parameters only), base64 by file name
//   weights_dtype "F32" or "F16": how best.safetensors stores them (live_weights.h)
//   train_config the run's config when it is a date run (the Train view trains it), else null
// No request of any kind: the module is never fetched, the worker is a Blob of inline text.
#pragma once

#include <map>
#include <string>

#include <nlohmann/json.hpp>

#include "seqgrad/models/run/run.h"

namespace seqgrad {

struct LiveBundle {
    std::string glue_js, wasm;  // the engine (bytes, gzipped when `gzip`)
    bool gzip = false;
    std::map<std::string, std::string> files;  // the run's files (bytes) by name
    std::string weights_dtype = "F32";         // of files["best.safetensors"]
    nlohmann::json train_config;               // null unless a date run
};

// Where the engine is looked for when --live-module is not given: $SEQGRAD_LIVE_MODULE, else the
// build-wasm folder beside the sources the command was built from.
std::string default_live_module_dir();

// Reads the engine from `module_dir` (seqgrad_live.js and seqgrad_live.wasm, or their .gz copies
// when both are there) and the run's files but its weights (choose_live_weights, live_weights.h,
// gives best.safetensors).
// A missing engine is an Error saying how to build it.
LiveBundle live_bundle(const std::string& module_dir, const LoadedRun& run,
                       const std::string& run_dir);

// The explore page (explore_page) with the live scripts and `bundle` inside, and a Content
// Security Policy that allows WebAssembly and a Blob worker (still no request of any kind).
std::string explore_live_page(const nlohmann::json& data, const std::string& title,
                              const LiveBundle& bundle);

}  // namespace seqgrad
