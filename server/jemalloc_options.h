// berthd's jemalloc options, compiled in (//server:jemalloc_options, linked
// into berthd with jemalloc itself): jemalloc reads `malloc_conf` before
// main(). The MALLOC_CONF environment variable still overrides each option,
// e.g. MALLOC_CONF=prof:true,prof_prefix:/tmp/berthd for a heap profile
// (docs/operate.md "What grows, and where it stops").
//
//   dirty_decay_ms:1000, muzzy_decay_ms:0 — memory berthd frees goes back to
//     the kernel after about a second instead of ten, so the resident peak
//     of a million-job sync is the live data's, not that plus the last ten
//     seconds' garbage (measured by berth-load when chosen: VmHWM 1,584 ->
//     1,439 MiB at 1M, the same CPU per sync).
//   background_thread:true — that decay is done by jemalloc's own threads.
//     Without them an arena is purged only when a thread allocates from it
//     again, so the freed pages of an arena whose threads went quiet (gRPC
//     request threads after a busy spell) stay resident for good
//     (docs/BENCHMARKS.md "Soak").
#ifndef BERTH_SERVER_JEMALLOC_OPTIONS_H_
#define BERTH_SERVER_JEMALLOC_OPTIONS_H_

extern "C" {
// The name and type are jemalloc's (man 3 jemalloc, "TUNING").
extern const char* malloc_conf;
}

#endif  // BERTH_SERVER_JEMALLOC_OPTIONS_H_
