# The live page's engine (cmake/wasm.cmake includes this): apps/explore/live/live_api.cpp and the
# float library, linked into build-wasm/seqgrad_live.js (the glue: MODULARIZE'd as
# SeqgradLive(options), instantiated from options.wasmBinary, never fetched) and
# build-wasm/seqgrad_live.wasm, and gzip copies of both (seqgrad_live.js.gz, .wasm.gz: a third of
# the size; gzip -n, so the same bytes every build). `seqgrad explore --live` puts the copies
# inside the page (apps/explore/live/live_page.cpp), which unpacks them with DecompressionStream.
add_executable(seqgrad_live ${CMAKE_CURRENT_LIST_DIR}/live_api.cpp)
target_compile_options(seqgrad_live PRIVATE -Wall -Wextra)
target_link_libraries(seqgrad_live PRIVATE seqgrad)
set(SEQGRAD_LIVE_EXPORTS _seqgrad_live_load _seqgrad_live_sentence _seqgrad_live_force
    _seqgrad_live_translate _seqgrad_live_saliency _seqgrad_live_train_start _seqgrad_live_train_steps
    _seqgrad_live_train_measure _seqgrad_live_train_save)
list(JOIN SEQGRAD_LIVE_EXPORTS "," SEQGRAD_LIVE_EXPORTS)
target_link_options(seqgrad_live PRIVATE -O2 -sMODULARIZE=1 -sEXPORT_NAME=SeqgradLive
  -sENVIRONMENT=worker,node -sINITIAL_MEMORY=67108864 -sTOTAL_STACK=16777216 -sFILESYSTEM=1
  -sEXPORTED_FUNCTIONS=${SEQGRAD_LIVE_EXPORTS} -sEXPORTED_RUNTIME_METHODS=ccall,FS)
add_custom_command(TARGET seqgrad_live POST_BUILD
  COMMAND gzip -9 -n -k -f seqgrad_live.js seqgrad_live.wasm
  WORKING_DIRECTORY ${PROJECT_BINARY_DIR} VERBATIM)
