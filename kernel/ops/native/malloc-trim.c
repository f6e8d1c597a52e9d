// Gives the memory the C heap holds free back to the operating system (glibc's malloc_trim), on a
// thread of its own so the event loop never waits for it. Why: a closed TLS connection frees
// OpenSSL's per-connection state (about 50 KiB) to glibc, which returns only free memory at the top
// of its heap; what lies between live chunks stays in the process (docs/operations.md, "Idle
// connections"). Built by scripts/build-native.mjs into dist/; the kernel runs without it.
//
// A Node-API module: the few functions it calls are declared here, so no header beyond libc's is
// needed to build it (`cc -shared`), and the one binary loads on every Node.js version.
#include <malloc.h>
#include <pthread.h>
#include <stdatomic.h>
#include <stddef.h>
#include <stdint.h>
#include <time.h>

typedef struct napi_env__ *napi_env;
typedef struct napi_value__ *napi_value;
typedef struct napi_callback_info__ *napi_callback_info;
typedef int napi_status;
typedef napi_value (*napi_callback)(napi_env, napi_callback_info);
extern napi_status napi_create_function(napi_env, const char *, size_t, napi_callback, void *, napi_value *);
extern napi_status napi_set_named_property(napi_env, napi_value, const char *, napi_value);
extern napi_status napi_get_boolean(napi_env, int, napi_value *);
extern napi_status napi_get_cb_info(napi_env, napi_callback_info, size_t *, napi_value *, napi_value *, void **);
extern napi_status napi_get_value_double(napi_env, napi_value, double *);
extern napi_status napi_create_double(napi_env, double, napi_value *);
extern napi_status napi_create_array_with_length(napi_env, size_t, napi_value *);
extern napi_status napi_set_element(napi_env, napi_value, uint32_t, napi_value);

static atomic_int busy;
static size_t min_free;
// the last pass, written by its thread before it clears `busy`: the free bytes it found in the
// C heap, the microseconds it took, whether it trimmed (1) or found too little to (0)
static double last[3];

static void *pass(void *unused) {
  (void)unused;
  struct timespec a, b;
  clock_gettime(CLOCK_MONOTONIC, &a);
  struct mallinfo2 before = mallinfo2();
  int trimmed = before.fordblks >= min_free;
  if (trimmed) malloc_trim(0);
  clock_gettime(CLOCK_MONOTONIC, &b);
  last[0] = (double)before.fordblks;
  last[1] = (double)(b.tv_sec - a.tv_sec) * 1e6 + (double)(b.tv_nsec - a.tv_nsec) / 1e3;
  last[2] = trimmed;
  atomic_store(&busy, 0);
  return 0;
}

// trim(minFreeBytes): starts a pass unless one runs; true when it started one
static napi_value trim(napi_env env, napi_callback_info info) {
  size_t argc = 1;
  napi_value argv[1], r;
  double min = 0;
  napi_get_cb_info(env, info, &argc, argv, 0, 0);
  if (argc >= 1) napi_get_value_double(env, argv[0], &min);
  int expected = 0, started = 0;
  if (atomic_compare_exchange_strong(&busy, &expected, 1)) {
    min_free = min > 0 ? (size_t)min : 0;
    pthread_t t;
    pthread_attr_t at;
    pthread_attr_init(&at);
    pthread_attr_setdetachstate(&at, PTHREAD_CREATE_DETACHED);
    started = pthread_create(&t, &at, pass, 0) == 0;
    pthread_attr_destroy(&at);
    if (!started) atomic_store(&busy, 0);
  }
  napi_get_boolean(env, started, &r);
  return r;
}

// lastPass(): [free bytes found, microseconds, trimmed 0/1] of the last finished pass
static napi_value last_pass(napi_env env, napi_callback_info info) {
  (void)info;
  napi_value arr, v;
  napi_create_array_with_length(env, 3, &arr);
  for (uint32_t i = 0; i < 3; i++) {
    napi_create_double(env, last[i], &v);
    napi_set_element(env, arr, i, v);
  }
  return arr;
}

napi_value napi_register_module_v1(napi_env env, napi_value exports) {
  napi_value f;
  napi_create_function(env, "trim", 4, trim, 0, &f);
  napi_set_named_property(env, exports, "trim", f);
  napi_create_function(env, "lastPass", 8, last_pass, 0, &f);
  napi_set_named_property(env, exports, "lastPass", f);
  return exports;
}
