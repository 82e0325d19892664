//===- Error.h - Errors as values for the trainer runtime -------*- C++ -*-===//
//
// The runtime never throws across its API and never aborts on user input:
// every fallible function returns an Error or an Expected<T>. Messages carry
// their context as "file: what went wrong", e.g.
//   "train-x.npy: expected float32 data, got <i8 (int64)".
//
//===----------------------------------------------------------------------===//

#ifndef TRAINCC_RUNTIME_SUPPORT_ERROR_H
#define TRAINCC_RUNTIME_SUPPORT_ERROR_H

#include <cstdint>
#include <string>
#include <string_view>
#include <type_traits>
#include <utility>
#include <variant>

namespace traincc::rt {

/// The outcome of an operation that returns nothing: success, or a failure
/// with a message. Contextual conversion to bool is true on failure, so
/// `if (Error err = f()) return err;` reads naturally.
class [[nodiscard]] Error {
public:
  /// A success value.
  Error() = default;
  static Error success() { return Error(); }
  /// A failure. An empty message still counts as a failure.
  static Error failure(std::string message) {
    Error err;
    err.failed_ = true;
    err.message_ = std::move(message);
    return err;
  }

  bool failed() const { return failed_; }
  explicit operator bool() const { return failed_; }
  const std::string &message() const { return message_; }

  /// Prefixes the message with "context: "; a success stays a success.
  Error withContext(std::string_view context) && {
    if (failed_)
      message_ = std::string(context) + ": " + message_;
    return std::move(*this);
  }

private:
  bool failed_ = false;
  std::string message_;
};

/// A value of type T or a failed Error. Check before dereferencing:
///   Expected<Tensor> t = read(path);
///   if (!t) return t.takeError();
template <typename T> class [[nodiscard]] Expected {
public:
  Expected(T value) : storage_(std::move(value)) {}
  /// Built from a success Error (a programming mistake), the Expected still
  /// holds a failure so that no caller ever reads a value that is not there.
  Expected(Error err)
      : storage_(err.failed()
                     ? std::move(err)
                     : Error::failure("internal error: Expected built from a "
                                      "success value")) {}
  /// Lets `return someDerivedOrConvertible;` work like it does for T.
  template <typename U, typename = std::enable_if_t<
                            std::is_constructible_v<T, U &&> &&
                            !std::is_same_v<std::decay_t<U>, T> &&
                            !std::is_same_v<std::decay_t<U>, Error>>>
  Expected(U &&value) : storage_(T(std::forward<U>(value))) {}

  bool ok() const { return storage_.index() == 0; }
  explicit operator bool() const { return ok(); }

  T &operator*() & { return std::get<0>(storage_); }
  const T &operator*() const & { return std::get<0>(storage_); }
  T *operator->() { return &std::get<0>(storage_); }
  const T *operator->() const { return &std::get<0>(storage_); }
  /// Moves the value out; only valid when ok().
  T take() { return std::move(std::get<0>(storage_)); }

  /// The failure; only valid when !ok().
  const Error &error() const { return std::get<1>(storage_); }
  Error takeError() {
    if (ok())
      return Error::success();
    return std::move(std::get<1>(storage_));
  }

private:
  std::variant<T, Error> storage_;
};

//===----------------------------------------------------------------------===//
// Message formatting (locale independent)
//===----------------------------------------------------------------------===//

/// The shortest decimal text that parses back to exactly `value`
/// ("0.1", "1e-07", "65536"); "nan", "inf", "-inf" for non-finite values.
std::string formatDouble(double value);

namespace detail {
inline void appendPiece(std::string &out, std::string_view s) { out += s; }
inline void appendPiece(std::string &out, const char *s) { out += s; }
inline void appendPiece(std::string &out, const std::string &s) { out += s; }
inline void appendPiece(std::string &out, char c) { out += c; }
inline void appendPiece(std::string &out, double v) { out += formatDouble(v); }
template <typename Int,
          typename = std::enable_if_t<std::is_integral_v<Int> &&
                                      !std::is_same_v<Int, char> &&
                                      !std::is_same_v<Int, bool>>>
void appendPiece(std::string &out, Int v) {
  out += std::to_string(v);
}
} // namespace detail

/// Concatenates strings, characters, integers and doubles into one string.
template <typename... Pieces> std::string strCat(const Pieces &...pieces) {
  std::string out;
  (detail::appendPiece(out, pieces), ...);
  return out;
}

/// Error::failure(strCat(pieces...)).
template <typename... Pieces> Error makeError(const Pieces &...pieces) {
  return Error::failure(strCat(pieces...));
}

} // namespace traincc::rt

#endif // TRAINCC_RUNTIME_SUPPORT_ERROR_H
