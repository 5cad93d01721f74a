#include "server/jemalloc_options.h"

extern "C" {
const char* malloc_conf = "background_thread:true,dirty_decay_ms:1000,muzzy_decay_ms:0";
}
