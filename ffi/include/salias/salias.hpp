// salias for C++: RAII handles over the C ABI (salias.h), in the shape of the original
// C++ library's API. Header-only; C++20 or later. Link libsalias_c (CMake: salias::salias).
//
//   salias::Config config;
//   config.name = "quotes";
//   config.capacity = 1u << 20;
//   config.num_producers = 2;
//   auto created = salias::FifoMpscChannel::create(config);
//   if (!created) { std::cerr << created.error().what(); return 1; }
//   auto channel = std::move(created).value();
//   auto publisher = channel.publisher();
//   auto subscriber = channel.subscriber();
//   publisher.offer(payload);              // false: no room now (backpressure)
//   auto message = subscriber.try_recv();  // std::nullopt: nothing yet
//   subscriber.release(*message);
//
// Typed messages: describe a struct once with SALIAS_MESSAGE(Type, "Name", version,
// field...), then use salias::FifoMpsc<Type> (and Publisher<Type>, Subscriber<Type>):
// connect checks the type against every other process's, Rust's derived types included.
//
// Errors: create/connect return salias::Expected<...> (check it, as in the original);
// other calls throw salias::Error, which carries the code and salias's sentence.
// Handles are movable, not copyable, and used by one thread at a time.

#ifndef SALIAS_HPP
#define SALIAS_HPP

#include <algorithm>
#include <array>
#include <chrono>
#include <cstddef>
#include <cstdint>
#include <optional>
#include <span>
#include <stdexcept>
#include <string>
#include <string_view>
#include <type_traits>
#include <utility>
#include <variant>
#include <vector>

#include "salias.h"

namespace salias {

/// A failed call: its code (SALIAS_ERROR_...) and salias's sentence saying what was wrong
/// and what to do.
class Error : public std::runtime_error {
 public:
  Error(salias_code code, const std::string& message) : std::runtime_error(message), code_(code) {}
  salias_code code() const noexcept { return code_; }
  /// The code's name, e.g. "SALIAS_ERROR_NOT_FOUND".
  std::string_view code_name() const noexcept { return salias_code_name(code_); }

  /// The error of the call that just returned `code` on this thread.
  static Error last(salias_code code) { return Error(code, salias_last_error()); }

 private:
  salias_code code_;
};

namespace detail {
inline void check(salias_code code) {
  if (code != SALIAS_OK) throw Error::last(code);
}
}  // namespace detail

/// A value or the Error that prevented it: what create and connect return.
template <class T>
class Expected {
 public:
  Expected(T value) : state_(std::move(value)) {}
  Expected(Error error) : state_(std::move(error)) {}

  bool has_value() const noexcept { return state_.index() == 0; }
  explicit operator bool() const noexcept { return has_value(); }

  T& value() & { return checked(); }
  const T& value() const& { return const_cast<Expected*>(this)->checked(); }
  T&& value() && { return std::move(checked()); }
  T& operator*() & { return std::get<0>(state_); }
  T&& operator*() && { return std::move(std::get<0>(state_)); }
  T* operator->() { return &std::get<0>(state_); }

  const Error& error() const { return std::get<1>(state_); }

 private:
  T& checked() {
    if (!has_value()) throw std::get<1>(state_);
    return std::get<0>(state_);
  }
  std::variant<T, Error> state_;
};

/// Huge pages for the rings (Linux, from a hugetlbfs mount; never a silent fallback).
enum class HugePage : std::uint32_t {
  None = SALIAS_HUGE_PAGES_NONE,
  Size2MB = SALIAS_HUGE_PAGES_2MB,
  Size1GB = SALIAS_HUGE_PAGES_1GB,
};

/// A channel's settings, with the original's names.
struct Config {
  std::string name;
  /// Bytes of ring per publisher.
  std::size_t capacity = 1u << 20;
  /// Publisher slots.
  std::uint32_t num_producers = 1;
  /// Subscriber slots; 0: the kind's default (1 for Mpsc, 8 for Fanout).
  std::uint32_t num_consumers = 0;
  /// Raw channels: the largest message in bytes; 0: 4096.
  std::size_t max_message_size = 0;
  /// How far a publisher may run ahead of the slowest subscriber; 0: the whole ring.
  std::size_t publication_window = 0;
  std::uint32_t permissions = 0600;
  HugePage huge = HugePage::None;
  /// The hugetlbfs mount; empty: $SALIAS_HUGETLBFS_DIR, else /dev/hugepages.
  std::string hugetlbfs_dir;
  /// The NUMA node to bind the rings to; -1: none.
  std::int32_t numa_node = -1;
  /// Fanout: demote a subscriber that holds publishers back longer than this; 0: never.
  std::chrono::nanoseconds tether_timeout{0};
  /// Keep the name after the owner's channel is destroyed.
  bool keep_on_drop = false;

  /// The C ABI's view; valid while this Config lives.
  salias_config to_c() const {
    salias_config c = salias_config_default(name.c_str());
    c.capacity = capacity;
    c.publishers = num_producers;
    c.subscribers = num_consumers;
    c.max_message_size = max_message_size;
    c.publication_window = publication_window;
    c.permissions = permissions;
    c.huge_pages = static_cast<std::uint32_t>(huge);
    c.hugetlbfs_dir = hugetlbfs_dir.empty() ? nullptr : hugetlbfs_dir.c_str();
    c.numa_node = numa_node;
    c.tether_timeout_ns = static_cast<std::uint64_t>(tether_timeout.count());
    c.keep_on_drop = keep_on_drop;
    return c;
  }
};

/// The four kinds.
enum class Kind : std::uint32_t {
  FifoMpsc = SALIAS_FIFO_MPSC,
  FifoFanout = SALIAS_FIFO_FANOUT,
  OrderedMpsc = SALIAS_ORDERED_MPSC,
  OrderedFanout = SALIAS_ORDERED_FANOUT,
};

/// Raw byte messages (the default payload).
struct Bytes {};

// ---- message types -------------------------------------------------------------------

/// How a typed channel's struct is described to salias; specialised by SALIAS_MESSAGE.
template <class T>
struct message_traits;

namespace detail {

template <class T, class = void>
struct has_traits : std::false_type {};
template <class T>
struct has_traits<T, std::void_t<decltype(message_traits<T>::name)>> : std::true_type {};

/// The field type's label as the Rust derive writes it.
template <class T>
std::string type_label() {
  using U = std::remove_cv_t<T>;
  if constexpr (std::is_array_v<U>) {
    return "[" + type_label<std::remove_extent_t<U>>() + ";" + std::to_string(std::extent_v<U>) + "]";
  } else if constexpr (std::is_same_v<U, float>) {
    return "f32";
  } else if constexpr (std::is_same_v<U, double>) {
    return "f64";
  } else if constexpr (std::is_integral_v<U> && !std::is_same_v<U, bool> && !std::is_same_v<U, char>) {
    return (std::is_signed_v<U> ? "i" : "u") + std::to_string(sizeof(U) * 8);
  } else if constexpr (std::is_same_v<U, char>) {
    static_assert(sizeof(U) == 0, "use int8_t or uint8_t for a byte field: the Rust side names it i8 or u8");
  } else if constexpr (has_traits<U>::value) {
    return std::string(message_traits<U>::name);
  } else {
    static_assert(sizeof(U) == 0,
                  "a salias message field must be an integer, float, double, an array of them, or a struct described "
                  "with SALIAS_MESSAGE");
  }
}

struct FieldInfo {
  std::string name;
  std::string label;
  std::size_t offset;
  std::size_t size;
};

/// A type's description, built once, in the C ABI's shape.
struct Description {
  std::string name;
  std::vector<FieldInfo> infos;
  std::vector<salias_field> fields;
  salias_message_type c{};

  Description(std::string type_name, std::size_t size, std::size_t align, std::uint32_t version,
              std::vector<FieldInfo> field_infos)
      : name(std::move(type_name)), infos(std::move(field_infos)) {
    for (const auto& info : infos) {
      fields.push_back(salias_field{info.name.c_str(), info.label.c_str(), info.offset, info.size});
    }
    c = salias_message_type{name.c_str(), size, align, version, fields.data(), fields.size()};
  }
  Description(const Description&) = delete;
  Description& operator=(const Description&) = delete;
};

template <class T>
const salias_message_type* describe() {
  if constexpr (std::is_same_v<T, Bytes>) {
    return nullptr;
  } else {
    static_assert(has_traits<T>::value, "describe the message type with SALIAS_MESSAGE(Type, \"Name\", version, fields...)");
    static_assert(std::is_trivially_copyable_v<T> && std::is_standard_layout_v<T>,
                  "a salias message is a plain struct: trivially copyable, standard layout");
    static const Description description(message_traits<T>::name, sizeof(T), alignof(T), message_traits<T>::version,
                                         message_traits<T>::fields());
    return &description.c;
  }
}

}  // namespace detail

// SALIAS_MESSAGE(Type, "Name", version, field, ...): up to 24 fields, in declaration order.
#define SALIAS_DETAIL_FIELD(Type, field) \
  ::salias::detail::FieldInfo{#field, ::salias::detail::type_label<decltype(Type::field)>(), offsetof(Type, field), \
                              sizeof(Type::field)}
#define SALIAS_DETAIL_EXPAND(x) x
#define SALIAS_DETAIL_F1(T, a) SALIAS_DETAIL_FIELD(T, a)
#define SALIAS_DETAIL_F2(T, a, ...) SALIAS_DETAIL_FIELD(T, a), SALIAS_DETAIL_EXPAND(SALIAS_DETAIL_F1(T, __VA_ARGS__))
#define SALIAS_DETAIL_F3(T, a, ...) SALIAS_DETAIL_FIELD(T, a), SALIAS_DETAIL_EXPAND(SALIAS_DETAIL_F2(T, __VA_ARGS__))
#define SALIAS_DETAIL_F4(T, a, ...) SALIAS_DETAIL_FIELD(T, a), SALIAS_DETAIL_EXPAND(SALIAS_DETAIL_F3(T, __VA_ARGS__))
#define SALIAS_DETAIL_F5(T, a, ...) SALIAS_DETAIL_FIELD(T, a), SALIAS_DETAIL_EXPAND(SALIAS_DETAIL_F4(T, __VA_ARGS__))
#define SALIAS_DETAIL_F6(T, a, ...) SALIAS_DETAIL_FIELD(T, a), SALIAS_DETAIL_EXPAND(SALIAS_DETAIL_F5(T, __VA_ARGS__))
#define SALIAS_DETAIL_F7(T, a, ...) SALIAS_DETAIL_FIELD(T, a), SALIAS_DETAIL_EXPAND(SALIAS_DETAIL_F6(T, __VA_ARGS__))
#define SALIAS_DETAIL_F8(T, a, ...) SALIAS_DETAIL_FIELD(T, a), SALIAS_DETAIL_EXPAND(SALIAS_DETAIL_F7(T, __VA_ARGS__))
#define SALIAS_DETAIL_F9(T, a, ...) SALIAS_DETAIL_FIELD(T, a), SALIAS_DETAIL_EXPAND(SALIAS_DETAIL_F8(T, __VA_ARGS__))
#define SALIAS_DETAIL_F10(T, a, ...) SALIAS_DETAIL_FIELD(T, a), SALIAS_DETAIL_EXPAND(SALIAS_DETAIL_F9(T, __VA_ARGS__))
#define SALIAS_DETAIL_F11(T, a, ...) SALIAS_DETAIL_FIELD(T, a), SALIAS_DETAIL_EXPAND(SALIAS_DETAIL_F10(T, __VA_ARGS__))
#define SALIAS_DETAIL_F12(T, a, ...) SALIAS_DETAIL_FIELD(T, a), SALIAS_DETAIL_EXPAND(SALIAS_DETAIL_F11(T, __VA_ARGS__))
#define SALIAS_DETAIL_F13(T, a, ...) SALIAS_DETAIL_FIELD(T, a), SALIAS_DETAIL_EXPAND(SALIAS_DETAIL_F12(T, __VA_ARGS__))
#define SALIAS_DETAIL_F14(T, a, ...) SALIAS_DETAIL_FIELD(T, a), SALIAS_DETAIL_EXPAND(SALIAS_DETAIL_F13(T, __VA_ARGS__))
#define SALIAS_DETAIL_F15(T, a, ...) SALIAS_DETAIL_FIELD(T, a), SALIAS_DETAIL_EXPAND(SALIAS_DETAIL_F14(T, __VA_ARGS__))
#define SALIAS_DETAIL_F16(T, a, ...) SALIAS_DETAIL_FIELD(T, a), SALIAS_DETAIL_EXPAND(SALIAS_DETAIL_F15(T, __VA_ARGS__))
#define SALIAS_DETAIL_F17(T, a, ...) SALIAS_DETAIL_FIELD(T, a), SALIAS_DETAIL_EXPAND(SALIAS_DETAIL_F16(T, __VA_ARGS__))
#define SALIAS_DETAIL_F18(T, a, ...) SALIAS_DETAIL_FIELD(T, a), SALIAS_DETAIL_EXPAND(SALIAS_DETAIL_F17(T, __VA_ARGS__))
#define SALIAS_DETAIL_F19(T, a, ...) SALIAS_DETAIL_FIELD(T, a), SALIAS_DETAIL_EXPAND(SALIAS_DETAIL_F18(T, __VA_ARGS__))
#define SALIAS_DETAIL_F20(T, a, ...) SALIAS_DETAIL_FIELD(T, a), SALIAS_DETAIL_EXPAND(SALIAS_DETAIL_F19(T, __VA_ARGS__))
#define SALIAS_DETAIL_F21(T, a, ...) SALIAS_DETAIL_FIELD(T, a), SALIAS_DETAIL_EXPAND(SALIAS_DETAIL_F20(T, __VA_ARGS__))
#define SALIAS_DETAIL_F22(T, a, ...) SALIAS_DETAIL_FIELD(T, a), SALIAS_DETAIL_EXPAND(SALIAS_DETAIL_F21(T, __VA_ARGS__))
#define SALIAS_DETAIL_F23(T, a, ...) SALIAS_DETAIL_FIELD(T, a), SALIAS_DETAIL_EXPAND(SALIAS_DETAIL_F22(T, __VA_ARGS__))
#define SALIAS_DETAIL_F24(T, a, ...) SALIAS_DETAIL_FIELD(T, a), SALIAS_DETAIL_EXPAND(SALIAS_DETAIL_F23(T, __VA_ARGS__))
#define SALIAS_DETAIL_PICK(_1, _2, _3, _4, _5, _6, _7, _8, _9, _10, _11, _12, _13, _14, _15, _16, _17, _18, _19, _20, \
                           _21, _22, _23, _24, NAME, ...)                                                            \
  NAME
#define SALIAS_DETAIL_FIELDS(T, ...)                                                                                 \
  SALIAS_DETAIL_EXPAND(SALIAS_DETAIL_PICK(__VA_ARGS__, SALIAS_DETAIL_F24, SALIAS_DETAIL_F23, SALIAS_DETAIL_F22,      \
                                          SALIAS_DETAIL_F21, SALIAS_DETAIL_F20, SALIAS_DETAIL_F19, SALIAS_DETAIL_F18, \
                                          SALIAS_DETAIL_F17, SALIAS_DETAIL_F16, SALIAS_DETAIL_F15, SALIAS_DETAIL_F14, \
                                          SALIAS_DETAIL_F13, SALIAS_DETAIL_F12, SALIAS_DETAIL_F11, SALIAS_DETAIL_F10, \
                                          SALIAS_DETAIL_F9, SALIAS_DETAIL_F8, SALIAS_DETAIL_F7, SALIAS_DETAIL_F6,     \
                                          SALIAS_DETAIL_F5, SALIAS_DETAIL_F4, SALIAS_DETAIL_F3, SALIAS_DETAIL_F2,     \
                                          SALIAS_DETAIL_F1)(T, __VA_ARGS__))

/// Describes `Type` to salias: its name and schema version as the Rust side's
/// `#[salias(name = ..., version = ...)]` (or struct name and 0), and every field in
/// declaration order, padding included (as `uint8_t _pad[N]`). At namespace scope.
#define SALIAS_MESSAGE(Type, type_name, schema_version, ...)                          \
  template <>                                                                         \
  struct salias::message_traits<Type> {                                               \
    static constexpr const char* name = type_name;                                    \
    static constexpr std::uint32_t version = schema_version;                          \
    static std::vector<::salias::detail::FieldInfo> fields() {                        \
      return {SALIAS_DETAIL_FIELDS(Type, __VA_ARGS__)};                               \
    }                                                                                 \
  }

// ---- handles -------------------------------------------------------------------------

namespace detail {
/// Owns one C handle and frees it once.
template <class H, salias_code (*Free)(H*)>
class Handle {
 public:
  Handle() = default;
  explicit Handle(H* raw) : raw_(raw) {}
  Handle(Handle&& other) noexcept : raw_(std::exchange(other.raw_, nullptr)) {}
  Handle& operator=(Handle&& other) noexcept {
    if (this != &other) {
      reset();
      raw_ = std::exchange(other.raw_, nullptr);
    }
    return *this;
  }
  Handle(const Handle&) = delete;
  Handle& operator=(const Handle&) = delete;
  ~Handle() { reset(); }

  H* get() const noexcept { return raw_; }
  void reset() noexcept {
    if (raw_ != nullptr) {
      (void)Free(raw_);
      raw_ = nullptr;
    }
  }

 private:
  H* raw_ = nullptr;
};
}  // namespace detail

/// A received message, in place in the ring: valid until the subscriber releases it.
template <class T = Bytes>
class Message {
 public:
  explicit Message(const salias_message& raw) : raw_(raw) {}

  const std::byte* data() const noexcept { return static_cast<const std::byte*>(raw_.data); }
  std::size_t size() const noexcept { return raw_.len; }
  std::span<const std::byte> bytes() const noexcept { return {data(), size()}; }
  /// The publisher slot that sent it.
  std::uint32_t publisher_slot() const noexcept { return raw_.publisher_slot; }
  /// Ordered channels: its global sequence number (0 on FIFO channels).
  std::uint64_t sequence() const noexcept { return raw_.sequence; }
  /// Ordered channels: sequence numbers lost right before it (publishers that died).
  std::uint64_t gap_before() const noexcept { return raw_.gap_before; }

  /// A typed channel's message (its payload is aligned for T).
  template <class U = T, class = std::enable_if_t<!std::is_same_v<U, Bytes>>>
  const U& operator*() const noexcept {
    return *static_cast<const U*>(raw_.data);
  }
  template <class U = T, class = std::enable_if_t<!std::is_same_v<U, Bytes>>>
  const U* operator->() const noexcept {
    return static_cast<const U*>(raw_.data);
  }

 private:
  salias_message raw_;
};

template <class T>
class Publisher;

/// Room for one message reserved in the ring, written in place: `commit()` publishes it;
/// a claim destroyed uncommitted is abandoned (nothing published, the room reused). The
/// publisher refuses its other calls with SALIAS_ERROR_BUSY while the claim lives. The
/// ring holds its previous bytes there: write every byte that is published.
template <class T = Bytes>
class Claim {
 public:
  Claim(Claim&& other) noexcept
      : publisher_(std::exchange(other.publisher_, nullptr)), data_(other.data_), size_(other.size_) {}
  Claim& operator=(Claim&&) = delete;
  Claim(const Claim&) = delete;
  Claim& operator=(const Claim&) = delete;
  ~Claim() {
    if (publisher_ != nullptr) (void)salias_publisher_abandon(publisher_);
  }

  /// A typed channel's message, to be written in place (aligned for T).
  template <class U = T, class = std::enable_if_t<!std::is_same_v<U, Bytes>>>
  U& operator*() const noexcept {
    return *static_cast<U*>(data_);
  }
  template <class U = T, class = std::enable_if_t<!std::is_same_v<U, Bytes>>>
  U* operator->() const noexcept {
    return static_cast<U*>(data_);
  }
  /// The claimed bytes.
  std::span<std::byte> bytes() const noexcept { return {static_cast<std::byte*>(data_), size_}; }

  /// Publishes the message (a raw claim: all the bytes claimed).
  void commit() { finish(size_); }
  /// Publishes the first `len` of the claimed bytes (a raw channel's claim).
  void commit(std::size_t len)
    requires std::is_same_v<T, Bytes>
  {
    finish(len);
  }
  /// Publishes nothing; the room is reused.
  void abandon() { detail::check(salias_publisher_abandon(taken())); }

 private:
  friend class Publisher<T>;
  Claim(salias_publisher* publisher, void* data, std::size_t size) : publisher_(publisher), data_(data), size_(size) {}
  salias_publisher* taken() {
    if (publisher_ == nullptr) throw Error(SALIAS_ERROR_NOT_HELD, "the claim was committed or abandoned already");
    return std::exchange(publisher_, nullptr);
  }
  void finish(std::size_t len) { detail::check(salias_publisher_commit(taken(), len)); }

  salias_publisher* publisher_;
  void* data_;
  std::size_t size_;
};

/// A publisher slot. `offer` returns false when the ring has no room (backpressure);
/// other failures throw salias::Error.
template <class T = Bytes>
class Publisher {
 public:
  explicit Publisher(salias_publisher* raw) : handle_(raw) {}

  /// Copies the message into the ring; false (nothing written) when there is no room.
  bool offer(std::span<const std::byte> message)
    requires std::is_same_v<T, Bytes>
  {
    return outcome(salias_publisher_offer(handle_.get(), message.data(), message.size()));
  }
  bool offer(const T& message)
    requires(!std::is_same_v<T, Bytes>)
  {
    return outcome(salias_publisher_offer(handle_.get(), &message, sizeof(T)));
  }

  /// Publishes as many of `messages` as fit, in order; how many.
  std::size_t offer_batch(std::span<const T> messages)
    requires(!std::is_same_v<T, Bytes>)
  {
    std::size_t published = 0;
    outcome(salias_publisher_offer_array(handle_.get(), messages.data(), sizeof(T), messages.size(), &published));
    return published;
  }
  /// Raw messages, described to the C ABI 64 at a time on the stack: no allocation.
  std::size_t offer_batch(std::span<const std::span<const std::byte>> messages)
    requires std::is_same_v<T, Bytes>
  {
    std::array<salias_bytes, 64> raw;
    std::size_t published = 0;
    while (published < messages.size()) {
      std::size_t group = std::min(raw.size(), messages.size() - published);
      for (std::size_t i = 0; i < group; ++i) {
        raw[i] = salias_bytes{messages[published + i].data(), messages[published + i].size()};
      }
      std::size_t taken = 0;
      outcome(salias_publisher_offer_batch(handle_.get(), raw.data(), group, &taken));
      published += taken;
      if (taken < group) break;
    }
    return published;
  }

  /// Reserves room for one message to be written in place; std::nullopt when there is no
  /// room. Typed channels: a T; raw ones: `len` bytes, of which `commit(n)` publishes n.
  std::optional<Claim<T>> claim()
    requires(!std::is_same_v<T, Bytes>)
  {
    return reserve(sizeof(T));
  }
  std::optional<Claim<T>> claim(std::size_t len)
    requires std::is_same_v<T, Bytes>
  {
    return reserve(len);
  }

  /// Waits for room (at most `timeout`; negative: as long as it takes); false on timeout.
  bool send(std::span<const std::byte> message, std::chrono::nanoseconds timeout = std::chrono::nanoseconds(-1))
    requires std::is_same_v<T, Bytes>
  {
    return outcome(salias_publisher_send(handle_.get(), message.data(), message.size(), timeout.count()));
  }
  bool send(const T& message, std::chrono::nanoseconds timeout = std::chrono::nanoseconds(-1))
    requires(!std::is_same_v<T, Bytes>)
  {
    return outcome(salias_publisher_send(handle_.get(), &message, sizeof(T), timeout.count()));
  }

  /// The readiness descriptor (readable when a waiting send could proceed); the
  /// publisher's, not to be closed.
  int fd() const {
    int fd = -1;
    detail::check(salias_publisher_fd(handle_.get(), &fd));
    return fd;
  }

  salias_publisher_info info() const {
    salias_publisher_info info{};
    detail::check(salias_publisher_info_get(handle_.get(), &info));
    return info;
  }

  salias_publisher* c_handle() const noexcept { return handle_.get(); }

 private:
  static bool outcome(salias_code code) {
    if (code == SALIAS_OK) return true;
    if (code == SALIAS_BACKPRESSURED || code == SALIAS_TIMED_OUT) return false;
    throw Error::last(code);
  }
  std::optional<Claim<T>> reserve(std::size_t len) {
    void* data = nullptr;
    if (!outcome(salias_publisher_claim(handle_.get(), len, &data))) return std::nullopt;
    return Claim<T>(handle_.get(), data, len);
  }
  detail::Handle<salias_publisher, salias_publisher_free> handle_;
};

/// A subscriber slot. Receives hand out messages in place; release each before the next.
template <class T = Bytes>
class Subscriber {
 public:
  explicit Subscriber(salias_subscriber* raw) : handle_(raw) {}

  /// The next message if one is committed; std::nullopt when there is none. Throws
  /// salias::Error, e.g. SALIAS_ERROR_DISCONNECTED once every publisher has gone.
  std::optional<Message<T>> try_recv() {
    salias_message raw{};
    salias_code code = salias_subscriber_try_recv(handle_.get(), &raw);
    if (code == SALIAS_EMPTY) return std::nullopt;
    detail::check(code);
    return Message<T>(raw);
  }

  /// Waits for the next message, at most `timeout` (negative: as long as it takes);
  /// std::nullopt on timeout.
  std::optional<Message<T>> recv(std::chrono::nanoseconds timeout = std::chrono::nanoseconds(-1)) {
    salias_message raw{};
    salias_code code = salias_subscriber_recv(handle_.get(), timeout.count(), &raw);
    if (code == SALIAS_TIMED_OUT) return std::nullopt;
    detail::check(code);
    return Message<T>(raw);
  }

  /// Releases the message: its bytes are no longer valid.
  void release(const Message<T>&) { detail::check(salias_subscriber_release(handle_.get())); }

  /// Calls `handle(message)` for up to `max` committed messages, each released after;
  /// how many. Never waits. `handle` must not throw.
  template <class F>
  std::size_t drain(std::size_t max, F&& handle) {
    auto call = [](void* context, const salias_message* raw) {
      (*static_cast<std::remove_reference_t<F>*>(context))(Message<T>(*raw));
    };
    std::size_t handled = 0;
    detail::check(salias_subscriber_drain(handle_.get(), max, call, &handle, &handled));
    return handled;
  }

  /// Copies up to `out.size()` messages into `out`; how many. Never waits.
  std::size_t drain_into(std::span<T> out)
    requires(!std::is_same_v<T, Bytes>)
  {
    std::size_t count = 0;
    detail::check(salias_subscriber_drain_into(handle_.get(), out.data(), sizeof(T), out.size(), &count));
    return count;
  }

  /// The readiness descriptor (readable when a message may be waiting); the
  /// subscriber's, not to be closed.
  int fd() const {
    int fd = -1;
    detail::check(salias_subscriber_fd(handle_.get(), &fd));
    return fd;
  }

  salias_subscriber_info info() const {
    salias_subscriber_info info{};
    detail::check(salias_subscriber_info_get(handle_.get(), &info));
    return info;
  }

  salias_subscriber* c_handle() const noexcept { return handle_.get(); }

 private:
  detail::Handle<salias_subscriber, salias_subscriber_free> handle_;
};

/// A named channel of kind `K` carrying `T` (raw bytes by default).
template <Kind K, class T = Bytes>
class Channel {
 public:
  /// Creates the channel; its name is taken until this object is destroyed (unless
  /// `keep_on_drop`).
  static Expected<Channel> create(const Config& config) {
    salias_config c = config.to_c();
    salias_channel* raw = nullptr;
    salias_code code = salias_channel_create(static_cast<std::uint32_t>(K), &c, detail::describe<T>(), &raw);
    if (code != SALIAS_OK) return Error::last(code);
    return Channel(raw);
  }

  /// Connects to an existing channel, checking its kind and message type.
  static Expected<Channel> connect(const std::string& name) {
    salias_channel* raw = nullptr;
    salias_code code =
        salias_channel_connect(static_cast<std::uint32_t>(K), name.c_str(), detail::describe<T>(), &raw);
    if (code != SALIAS_OK) return Error::last(code);
    return Channel(raw);
  }

  /// Claims a publisher slot; throws salias::Error (SALIAS_ERROR_NO_FREE_SLOT, ...).
  Publisher<T> publisher() const {
    salias_publisher* raw = nullptr;
    detail::check(salias_channel_publisher(handle_.get(), &raw));
    return Publisher<T>(raw);
  }

  /// Claims a subscriber slot; throws salias::Error.
  Subscriber<T> subscriber() const {
    salias_subscriber* raw = nullptr;
    detail::check(salias_channel_subscriber(handle_.get(), &raw));
    return Subscriber<T>(raw);
  }

  salias_channel_info info() const {
    salias_channel_info info{};
    detail::check(salias_channel_info_get(handle_.get(), &info));
    return info;
  }

  salias_channel* c_handle() const noexcept { return handle_.get(); }

 private:
  explicit Channel(salias_channel* raw) : handle_(raw) {}
  detail::Handle<salias_channel, salias_channel_free> handle_;
};

using FifoMpscChannel = Channel<Kind::FifoMpsc>;
using FifoFanoutChannel = Channel<Kind::FifoFanout>;
using OrderedMpscChannel = Channel<Kind::OrderedMpsc>;
using OrderedFanoutChannel = Channel<Kind::OrderedFanout>;

template <class T>
using FifoMpsc = Channel<Kind::FifoMpsc, T>;
template <class T>
using FifoFanout = Channel<Kind::FifoFanout, T>;
template <class T>
using OrderedMpsc = Channel<Kind::OrderedMpsc, T>;
template <class T>
using OrderedFanout = Channel<Kind::OrderedFanout, T>;

/// Removes the channel's names whatever state it is in.
inline void remove(const std::string& name) { detail::check(salias_remove(name.c_str())); }

/// A channel's live state, read by name without connecting: as `salias top` shows it.
struct ChannelStatus {
  salias_status channel{};
  std::vector<salias_publisher_status> publishers;
  std::vector<salias_subscriber_status> subscribers;

  std::string_view type_name() const noexcept { return channel.type_name; }
};

/// Reads channel `name`'s state and every slot's; takes no slot and changes nothing.
inline Expected<ChannelStatus> channel_status(const std::string& name) {
  ChannelStatus status;
  // The slot counts are fixed when the channel is made: the first call learns them.
  for (int pass = 0; pass < 2; ++pass) {
    salias_code code = salias_channel_status(name.c_str(), &status.channel, status.publishers.data(),
                                             status.publishers.size(), status.subscribers.data(),
                                             status.subscribers.size());
    if (code != SALIAS_OK) return Error::last(code);
    status.publishers.resize(status.channel.publisher_slots);
    status.subscribers.resize(status.channel.subscriber_slots);
  }
  return status;
}

}  // namespace salias

#endif  // SALIAS_HPP
