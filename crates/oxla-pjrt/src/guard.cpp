// oxla's guard around every PJRT C API call: a C++ exception that escapes a
// plugin (seen: XLA's CPU plugin on a corrupted MLIR bytecode module) would
// unwind into Rust, which aborts the process. Here it is caught at the
// boundary and handed back as a message.

#include <cstddef>
#include <cstring>
#include <exception>

namespace {

void copy_message(const char* message, char* what, std::size_t what_len) {
  if (what_len == 0) return;
  std::strncpy(what, message, what_len - 1);
  what[what_len - 1] = '\0';
}

}  // namespace

extern "C" void* oxla_pjrt_guarded_call(void* (*function)(void*), void* args, char* what,
                                        std::size_t what_len, int* threw) {
  *threw = 0;
  try {
    return function(args);
  } catch (const std::exception& e) {
    *threw = 1;
    copy_message(e.what(), what, what_len);
  } catch (...) {
    *threw = 1;
    copy_message("an exception that is not a std::exception", what, what_len);
  }
  return nullptr;
}
