/* Debian's libbpf (libbpf-dev): loading, attaching and pinning BPF objects, and the bpf()
 * map calls. Imported only by CAppCounters. */
#include <bpf/bpf.h>
#include <bpf/libbpf.h>
