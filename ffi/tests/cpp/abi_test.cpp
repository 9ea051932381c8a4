// The C ABI and the C++ wrapper in one process, under AddressSanitizer and
// UndefinedBehaviorSanitizer: every call's code, bad handles and arguments refused, the
// hold/release and claim/commit states, and each kind end to end.
// Run by ffi/tests/cpp.rs; exits 0 when every check held, else names the first that did not.

#include <fcntl.h>
#include <unistd.h>

#include <algorithm>
#include <cstdio>
#include <cstdlib>
#include <cstring>
#include <string>
#include <thread>
#include <vector>

#include "messages.hpp"

namespace {

int checks = 0;

#define CHECK(condition)                                                                             \
  do {                                                                                               \
    ++checks;                                                                                        \
    if (!(condition)) {                                                                              \
      std::fprintf(stderr, "%s:%d: check failed: %s (last error: %s)\n", __FILE__, __LINE__, #condition, \
                   salias_last_error());                                                             \
      std::exit(1);                                                                                  \
    }                                                                                                \
  } while (0)

#define CHECK_CODE(call, expected)                                                                           \
  do {                                                                                                       \
    ++checks;                                                                                                \
    salias_code got_ = (call);                                                                               \
    if (got_ != (expected)) {                                                                                \
      std::fprintf(stderr, "%s:%d: %s returned %s, expected %s (last error: %s)\n", __FILE__, __LINE__, #call, \
                   salias_code_name(got_), salias_code_name(expected), salias_last_error());                 \
      std::exit(1);                                                                                          \
    }                                                                                                        \
  } while (0)

bool last_error_says(const char* words) { return std::strstr(salias_last_error(), words) != nullptr; }

std::string unique(const char* tag) { return std::string("abi-") + tag + "-" + std::to_string(getpid()); }

salias_channel* create(std::uint32_t kind, const std::string& name, const salias_message_type* type = nullptr,
                       std::size_t capacity = 64 * 1024) {
  salias_config config = salias_config_default(name.c_str());
  config.capacity = capacity;
  config.publishers = 2;
  salias_channel* channel = nullptr;
  CHECK_CODE(salias_channel_create(kind, &config, type, &channel), SALIAS_OK);
  return channel;
}

void bad_handles_are_refused() {
  salias_channel* channel = create(SALIAS_FIFO_MPSC, unique("handles"));
  salias_publisher* publisher = nullptr;
  CHECK_CODE(salias_channel_publisher(channel, &publisher), SALIAS_OK);
  const char byte = 1;

  CHECK_CODE(salias_publisher_offer(nullptr, &byte, 1), SALIAS_ERROR_BAD_HANDLE);
  CHECK(last_error_says("is null"));
  // Forged: never made by salias.
  auto* forged = reinterpret_cast<salias_publisher*>(std::uintptr_t{0x1234});
  CHECK_CODE(salias_publisher_offer(forged, &byte, 1), SALIAS_ERROR_BAD_HANDLE);
  CHECK(last_error_says("never made"));
  auto* far = reinterpret_cast<salias_publisher*>(~std::uintptr_t{0});
  CHECK_CODE(salias_publisher_offer(far, &byte, 1), SALIAS_ERROR_BAD_HANDLE);
  // Another kind of handle.
  CHECK_CODE(salias_publisher_offer(reinterpret_cast<salias_publisher*>(channel), &byte, 1), SALIAS_ERROR_BAD_HANDLE);
  CHECK(last_error_says("is a channel, not a publisher"));
  CHECK_CODE(salias_subscriber_free(reinterpret_cast<salias_subscriber*>(publisher)), SALIAS_ERROR_BAD_HANDLE);
  // Still usable after all that.
  CHECK_CODE(salias_publisher_offer(publisher, &byte, 1), SALIAS_OK);
  // Freed, then used, then freed again.
  CHECK_CODE(salias_publisher_free(publisher), SALIAS_OK);
  CHECK_CODE(salias_publisher_offer(publisher, &byte, 1), SALIAS_ERROR_BAD_HANDLE);
  CHECK(last_error_says("was freed"));
  CHECK_CODE(salias_publisher_free(publisher), SALIAS_ERROR_BAD_HANDLE);
  // A new handle reuses the slot with a new generation: the old token stays dead.
  salias_publisher* again = nullptr;
  CHECK_CODE(salias_channel_publisher(channel, &again), SALIAS_OK);
  CHECK(again != publisher);
  CHECK_CODE(salias_publisher_offer(publisher, &byte, 1), SALIAS_ERROR_BAD_HANDLE);
  CHECK_CODE(salias_publisher_offer(again, &byte, 1), SALIAS_OK);
  CHECK_CODE(salias_publisher_free(again), SALIAS_OK);
  CHECK_CODE(salias_channel_free(channel), SALIAS_OK);
  CHECK_CODE(salias_channel_free(channel), SALIAS_ERROR_BAD_HANDLE);
}

void bad_arguments_are_refused() {
  salias_channel* channel = nullptr;
  const std::string name = unique("arguments");
  salias_config config = salias_config_default(name.c_str());
  CHECK_CODE(salias_channel_create(SALIAS_FIFO_MPSC, nullptr, nullptr, &channel), SALIAS_ERROR_INVALID_ARGUMENT);
  CHECK_CODE(salias_channel_create(SALIAS_FIFO_MPSC, &config, nullptr, nullptr), SALIAS_ERROR_INVALID_ARGUMENT);
  CHECK_CODE(salias_channel_create(7, &config, nullptr, &channel), SALIAS_ERROR_INVALID_ARGUMENT);
  CHECK(last_error_says("kind 7 is not a channel kind"));
  CHECK(channel == nullptr);

  salias_config unnamed = salias_config_default(nullptr);
  CHECK_CODE(salias_channel_create(SALIAS_FIFO_MPSC, &unnamed, nullptr, &channel), SALIAS_ERROR_INVALID_ARGUMENT);
  salias_config not_utf8 = salias_config_default("\xff\xfe");
  CHECK_CODE(salias_channel_create(SALIAS_FIFO_MPSC, &not_utf8, nullptr, &channel), SALIAS_ERROR_INVALID_ARGUMENT);
  salias_config bad_name = salias_config_default("has a space");
  CHECK_CODE(salias_channel_create(SALIAS_FIFO_MPSC, &bad_name, nullptr, &channel), SALIAS_ERROR_INVALID_NAME);
  salias_config no_room = config;
  no_room.capacity = 0;
  CHECK_CODE(salias_channel_create(SALIAS_FIFO_MPSC, &no_room, nullptr, &channel), SALIAS_ERROR_INVALID_CONFIG);
  salias_config bad_pages = config;
  bad_pages.huge_pages = 9;
  CHECK_CODE(salias_channel_create(SALIAS_FIFO_MPSC, &bad_pages, nullptr, &channel), SALIAS_ERROR_INVALID_ARGUMENT);

  CHECK_CODE(salias_channel_connect(SALIAS_FIFO_MPSC, unique("missing").c_str(), nullptr, &channel),
             SALIAS_ERROR_NOT_FOUND);

  // A described type with padding, and one whose fields run past its size.
  salias_field padded_fields[] = {{"a", "u32", 0, 4}, {"b", "u64", 8, 8}};
  salias_message_type padded{"Padded", 16, 8, 0, padded_fields, 2};
  CHECK_CODE(salias_channel_create(SALIAS_FIFO_MPSC, &config, &padded, &channel), SALIAS_ERROR_INVALID_MESSAGE_TYPE);
  CHECK(last_error_says("padding"));
  salias_message_type null_fields{"Null", 8, 8, 0, nullptr, 1};
  CHECK_CODE(salias_channel_create(SALIAS_FIFO_MPSC, &config, &null_fields, &channel), SALIAS_ERROR_INVALID_ARGUMENT);
  // A typed channel's messages are its type's size.
  salias_config sized = config;
  sized.max_message_size = 100;
  CHECK_CODE(salias_channel_create(SALIAS_FIFO_MPSC, &sized, salias::detail::describe<Quote>(), &channel),
             SALIAS_ERROR_INVALID_CONFIG);

  // The last error, copied with snprintf's contract.
  char small[8];
  std::size_t full = salias_last_error_copy(small, sizeof small);
  CHECK(full == std::strlen(salias_last_error()));
  CHECK(std::strlen(small) == sizeof small - 1);
  CHECK(salias_last_error_copy(nullptr, 0) == full);
  CHECK(std::strcmp(salias_code_name(SALIAS_ERROR_TYPE_MISMATCH), "SALIAS_ERROR_TYPE_MISMATCH") == 0);
  CHECK(std::strcmp(salias_code_name(12345), "an unknown code") == 0);
}

void holding_and_claiming_are_states() {
  std::string name = unique("states");
  salias_channel* channel = create(SALIAS_FIFO_MPSC, name);
  salias_publisher* publisher = nullptr;
  salias_subscriber* subscriber = nullptr;
  CHECK_CODE(salias_channel_publisher(channel, &publisher), SALIAS_OK);
  CHECK_CODE(salias_channel_subscriber(channel, &subscriber), SALIAS_OK);
  salias_message message{};

  CHECK_CODE(salias_subscriber_try_recv(subscriber, &message), SALIAS_EMPTY);
  CHECK_CODE(salias_subscriber_recv(subscriber, 1000000, &message), SALIAS_TIMED_OUT);
  CHECK_CODE(salias_subscriber_release(subscriber), SALIAS_ERROR_NOT_HELD);

  std::vector<char> too_large(4097, 'x');
  CHECK_CODE(salias_publisher_offer(publisher, too_large.data(), too_large.size()), SALIAS_ERROR_MESSAGE_TOO_LARGE);
  CHECK_CODE(salias_publisher_offer(publisher, nullptr, 3), SALIAS_ERROR_INVALID_ARGUMENT);
  CHECK_CODE(salias_publisher_offer(publisher, nullptr, 0), SALIAS_OK);  // an empty message

  // A claim: the publisher is busy until it is committed or abandoned.
  void* place = nullptr;
  CHECK_CODE(salias_publisher_claim(publisher, 5, &place), SALIAS_OK);
  CHECK_CODE(salias_publisher_offer(publisher, "x", 1), SALIAS_ERROR_BUSY);
  salias_publisher_info publisher_info{};
  CHECK_CODE(salias_publisher_info_get(publisher, &publisher_info), SALIAS_ERROR_BUSY);
  std::memcpy(place, "claim", 5);
  CHECK_CODE(salias_publisher_commit(publisher, 6), SALIAS_ERROR_MESSAGE_TOO_LARGE);  // more than claimed: abandoned
  CHECK_CODE(salias_publisher_commit(publisher, 5), SALIAS_ERROR_NOT_HELD);
  CHECK_CODE(salias_publisher_claim(publisher, 5, &place), SALIAS_OK);
  std::memcpy(place, "claim", 5);
  CHECK_CODE(salias_publisher_commit(publisher, 3), SALIAS_OK);
  CHECK_CODE(salias_publisher_claim(publisher, 5, &place), SALIAS_OK);
  CHECK_CODE(salias_publisher_abandon(publisher), SALIAS_OK);
  CHECK_CODE(salias_publisher_abandon(publisher), SALIAS_ERROR_NOT_HELD);
  CHECK_CODE(salias_publisher_info_get(publisher, &publisher_info), SALIAS_OK);
  CHECK(publisher_info.published == 2);

  // A held message: the subscriber is busy until it is released.
  CHECK_CODE(salias_subscriber_try_recv(subscriber, &message), SALIAS_OK);
  CHECK(message.len == 0);
  CHECK_CODE(salias_subscriber_try_recv(subscriber, &message), SALIAS_ERROR_BUSY);
  salias_subscriber_info subscriber_info{};
  CHECK_CODE(salias_subscriber_info_get(subscriber, &subscriber_info), SALIAS_ERROR_BUSY);
  CHECK_CODE(salias_subscriber_release(subscriber), SALIAS_OK);
  CHECK_CODE(salias_subscriber_try_recv(subscriber, &message), SALIAS_OK);
  CHECK(message.len == 3 && std::memcmp(message.data, "cla", 3) == 0);
  // Freeing a subscriber that holds a message releases it; the next one resumes there.
  CHECK_CODE(salias_subscriber_free(subscriber), SALIAS_OK);
  CHECK_CODE(salias_channel_subscriber(channel, &subscriber), SALIAS_OK);

  // Backpressure: a full ring refuses, nothing written; a blocking send times out.
  std::vector<char> big(1000, 'b');
  int offered = 0;
  salias_code code;
  while ((code = salias_publisher_offer(publisher, big.data(), big.size())) == SALIAS_OK) ++offered;
  CHECK_CODE(code, SALIAS_BACKPRESSURED);
  CHECK(offered > 10);
  CHECK_CODE(salias_publisher_send(publisher, big.data(), big.size(), 1000000), SALIAS_TIMED_OUT);
  void* no_room = nullptr;
  CHECK_CODE(salias_publisher_claim(publisher, 1000, &no_room), SALIAS_BACKPRESSURED);

  // The batch functions.
  std::size_t handled = 0;
  auto count = [](void* context, const salias_message* received) {
    *static_cast<std::size_t*>(context) += received->len == 1000 ? 1 : 1000000;
  };
  std::size_t seen = 0;
  CHECK_CODE(salias_subscriber_drain(subscriber, 1000, count, &seen, &handled), SALIAS_OK);
  CHECK(handled == static_cast<std::size_t>(offered) && seen == handled);
  CHECK_CODE(salias_subscriber_drain(subscriber, 10, nullptr, nullptr, &handled), SALIAS_ERROR_INVALID_ARGUMENT);
  salias_bytes batch[3] = {{"one", 3}, {"three", 5}, {nullptr, 0}};
  std::size_t published = 0;
  CHECK_CODE(salias_publisher_offer_batch(publisher, batch, 3, &published), SALIAS_OK);
  CHECK(published == 3);
  salias_bytes bad_batch[1] = {{nullptr, 4}};
  CHECK_CODE(salias_publisher_offer_batch(publisher, bad_batch, 1, &published), SALIAS_ERROR_INVALID_ARGUMENT);
  CHECK_CODE(salias_subscriber_recv(subscriber, -1, &message), SALIAS_OK);
  CHECK(message.len == 3 && std::memcmp(message.data, "one", 3) == 0);
  // The descriptor is made on first request, which needs the subscriber free.
  int fd = -1;
  CHECK_CODE(salias_subscriber_fd(subscriber, &fd), SALIAS_ERROR_BUSY);
  CHECK_CODE(salias_subscriber_release(subscriber), SALIAS_OK);

  // The readiness descriptors are open descriptors.
  CHECK_CODE(salias_subscriber_fd(subscriber, &fd), SALIAS_OK);
  CHECK(fd >= 0 && fcntl(fd, F_GETFD) != -1);
  CHECK_CODE(salias_publisher_fd(publisher, &fd), SALIAS_OK);
  CHECK(fd >= 0 && fcntl(fd, F_GETFD) != -1);

  // Every publisher gone and everything received: disconnected, reported once.
  CHECK_CODE(salias_publisher_free(publisher), SALIAS_OK);
  CHECK_CODE(salias_subscriber_drain(subscriber, 10, count, &seen, &handled), SALIAS_OK);
  CHECK(handled == 2);
  CHECK_CODE(salias_subscriber_try_recv(subscriber, &message), SALIAS_ERROR_DISCONNECTED);
  CHECK(last_error_says("every publisher of the channel has gone"));
  CHECK_CODE(salias_subscriber_try_recv(subscriber, &message), SALIAS_EMPTY);

  // No slot left: the Mpsc channel's one subscriber slot is held.
  salias_subscriber* second = nullptr;
  CHECK_CODE(salias_channel_subscriber(channel, &second), SALIAS_ERROR_NO_FREE_SLOT);

  salias_channel_info info{};
  CHECK_CODE(salias_channel_info_get(channel, &info), SALIAS_OK);
  CHECK(info.capacity == 64 * 1024 && info.publishers == 2 && info.subscribers == 1 && info.is_owner);
  CHECK_CODE(salias_subscriber_free(subscriber), SALIAS_OK);
  CHECK_CODE(salias_channel_free(channel), SALIAS_OK);
  CHECK_CODE(salias_channel_connect(SALIAS_FIFO_MPSC, name.c_str(), nullptr, &channel), SALIAS_ERROR_NOT_FOUND);
}

void types_and_kinds_are_checked_at_connect() {
  std::string name = unique("typed");
  salias_channel* owner = create(SALIAS_ORDERED_FANOUT, name, salias::detail::describe<Quote>());
  salias_channel* other = nullptr;
  CHECK_CODE(salias_channel_connect(SALIAS_ORDERED_FANOUT, name.c_str(), salias::detail::describe<SwappedQuote>(),
                                    &other),
             SALIAS_ERROR_TYPE_MISMATCH);
  CHECK(last_error_says("`Quote` (schema v3, 32 bytes"));
  CHECK_CODE(salias_channel_connect(SALIAS_ORDERED_FANOUT, name.c_str(), nullptr, &other), SALIAS_ERROR_TYPE_MISMATCH);
  CHECK_CODE(salias_channel_connect(SALIAS_FIFO_FANOUT, name.c_str(), salias::detail::describe<Quote>(), &other),
             SALIAS_ERROR_KIND_MISMATCH);
  CHECK_CODE(salias_channel_connect_as_bytes(SALIAS_ORDERED_FANOUT, name.c_str(), &other), SALIAS_OK);
  salias_publisher* raw = nullptr;
  CHECK_CODE(salias_channel_publisher(other, &raw), SALIAS_OK);
  Quote quote = quote_for(0, 1);
  CHECK_CODE(salias_publisher_offer(raw, &quote, sizeof quote - 1), SALIAS_ERROR_WRONG_MESSAGE_SIZE);
  CHECK_CODE(salias_publisher_free(raw), SALIAS_OK);
  CHECK_CODE(salias_channel_free(other), SALIAS_OK);
  CHECK_CODE(salias_channel_create(SALIAS_ORDERED_FANOUT, nullptr, nullptr, &other), SALIAS_ERROR_INVALID_ARGUMENT);
  CHECK_CODE(salias_channel_free(owner), SALIAS_OK);
}

void status_reads_without_connecting() {
  std::string name = unique("status");
  salias_channel* channel = create(SALIAS_ORDERED_MPSC, name);
  salias_publisher* publisher = nullptr;
  CHECK_CODE(salias_channel_publisher(channel, &publisher), SALIAS_OK);
  CHECK_CODE(salias_publisher_offer(publisher, "abc", 3), SALIAS_OK);
  salias_status status{};
  // One entry for two slots: the first is filled, the count says there are two.
  salias_publisher_status publishers[2]{};
  publishers[1].pid = 12345;
  CHECK_CODE(salias_channel_status(name.c_str(), &status, publishers, 1, nullptr, 0), SALIAS_OK);
  CHECK(status.initialised && !status.stale && status.kind == SALIAS_ORDERED_MPSC && !status.typed);
  CHECK(status.type_name[0] == '\0' && status.message_size == 0 && status.max_message_size == 4096);
  CHECK(status.capacity == 64 * 1024 && status.publisher_slots == 2 && status.subscriber_slots == 1);
  CHECK(status.owner_state == SALIAS_SLOT_ALIVE && status.owner_pid == static_cast<std::uint32_t>(getpid()));
  CHECK(status.has_sequence && status.sequence == 1 && status.mode == 0600 && status.owner_uid == getuid());
  CHECK(publishers[0].state == SALIAS_SLOT_ALIVE && publishers[0].published == 1 && !publishers[0].has_pending);
  CHECK(publishers[1].pid == 12345);
  CHECK_CODE(salias_channel_status(name.c_str(), &status, nullptr, 2, nullptr, 0), SALIAS_ERROR_INVALID_ARGUMENT);
  CHECK(last_error_says("publishers is a null pointer with length 2"));
  CHECK_CODE(salias_channel_status(name.c_str(), nullptr, nullptr, 0, nullptr, 0), SALIAS_ERROR_INVALID_ARGUMENT);
  CHECK_CODE(salias_channel_status(unique("absent").c_str(), &status, nullptr, 0, nullptr, 0), SALIAS_ERROR_NOT_FOUND);
  CHECK_CODE(salias_publisher_free(publisher), SALIAS_OK);
  CHECK_CODE(salias_channel_free(channel), SALIAS_OK);
  CHECK_CODE(salias_channel_status(name.c_str(), &status, nullptr, 0, nullptr, 0), SALIAS_ERROR_NOT_FOUND);
}

/// Each kind, through the C++ wrapper: typed messages in, the same out, in order; Ordered
/// ones numbered one after another across two publishers.
template <salias::Kind K>
void round_trip() {
  salias::Config config;
  config.name = unique("kind") + std::to_string(static_cast<int>(K));
  config.capacity = 16 * 1024;
  config.num_producers = 2;
  if (K == salias::Kind::FifoFanout || K == salias::Kind::OrderedFanout) config.num_consumers = 2;
  auto created = salias::Channel<K, Quote>::create(config);
  CHECK(created.has_value());
  auto channel = std::move(created).value();
  auto subscriber = channel.subscriber();
  auto first = channel.publisher();
  auto second = channel.publisher();
  // Moved across a thread: a handle may change threads between uses.
  std::thread([&] { CHECK(first.offer(quote_for(0, 0))); }).join();
  CHECK(second.offer(quote_for(1, 0)));
  std::vector<Quote> batch{quote_for(0, 1), quote_for(0, 2), quote_for(0, 3)};
  CHECK(first.offer_batch(batch) == 3);

  std::vector<Quote> seen;
  std::uint64_t previous = 0;
  for (int i = 0; i < 5; ++i) {
    auto message = subscriber.try_recv();
    CHECK(message.has_value());
    seen.push_back(**message);
    constexpr bool is_ordered = K == salias::Kind::OrderedMpsc || K == salias::Kind::OrderedFanout;
    if (is_ordered) {
      CHECK(i == 0 || message->sequence() == previous + 1);
      previous = message->sequence();
    }
    subscriber.release(*message);
  }
  CHECK(!subscriber.try_recv().has_value());
  int from_first = 0;
  for (const Quote& quote : seen) {
    if (quote.instrument >> 32 == 0) {
      Quote expected = quote_for(0, from_first++);
      CHECK(std::memcmp(&quote, &expected, sizeof quote) == 0);
    }
  }
  CHECK(from_first == 4);

  auto status = salias::channel_status(config.name);
  CHECK(status.has_value());
  CHECK(status->channel.kind == static_cast<std::uint32_t>(K) && status->channel.typed);
  CHECK(status->type_name() == "Quote" && status->channel.message_size == sizeof(Quote));
  CHECK(status->channel.schema_version == 3);
  CHECK(status->publishers.size() == 2 && status->subscribers.size() == std::max(config.num_consumers, 1u));
  CHECK(status->publishers[0].published + status->publishers[1].published == 5);
  CHECK(status->subscribers[0].state == SALIAS_SLOT_ALIVE && !status->subscribers[0].lossy);
  constexpr bool ordered = K == salias::Kind::OrderedMpsc || K == salias::Kind::OrderedFanout;
  CHECK(status->channel.has_sequence == ordered && status->channel.sequence == (ordered ? 5 : 0));

  // The wrapper's errors: a third publisher has no slot; connecting to nothing fails.
  try {
    auto third = channel.publisher();
    CHECK(false);
  } catch (const salias::Error& error) {
    CHECK(error.code() == SALIAS_ERROR_NO_FREE_SLOT);
    CHECK(error.code_name() == "SALIAS_ERROR_NO_FREE_SLOT");
  }
  auto missing = salias::Channel<K, Quote>::connect(unique("nowhere"));
  CHECK(!missing && missing.error().code() == SALIAS_ERROR_NOT_FOUND);
  bool threw = false;
  try {
    (void)std::move(missing).value();
  } catch (const salias::Error&) {
    threw = true;
  }
  CHECK(threw);

  // drain_into copies typed messages out.
  for (int i = 0; i < 3; ++i) CHECK(second.offer(quote_for(1, 1 + i)));
  std::vector<Quote> out(8);
  CHECK(subscriber.drain_into(out) == 3);
  Quote expected = quote_for(1, 3);
  CHECK(std::memcmp(&out[2], &expected, sizeof expected) == 0);
}

/// The wrapper's claims, typed and raw: committed ones arrive, abandoned or dropped ones do
/// not; the publisher is busy while one lives. A raw batch longer than the wrapper's
/// 64-message groups arrives whole and in order.
void claims_and_raw_batches_through_the_wrapper() {
  salias::Config config;
  config.name = unique("claims");
  config.capacity = 16 * 1024;
  auto typed = salias::FifoMpsc<Quote>::create(config);
  CHECK(typed.has_value());
  auto channel = std::move(typed).value();
  auto subscriber = channel.subscriber();
  auto publisher = channel.publisher();
  {
    auto claim = publisher.claim();
    CHECK(claim.has_value());
    **claim = quote_for(0, 7);
    bool busy = false;
    try {
      (void)publisher.offer(quote_for(0, 8));
    } catch (const salias::Error& error) {
      busy = error.code() == SALIAS_ERROR_BUSY;
    }
    CHECK(busy);
    claim->commit();
    bool twice = false;
    try {
      claim->commit();
    } catch (const salias::Error& error) {
      twice = error.code() == SALIAS_ERROR_NOT_HELD;
    }
    CHECK(twice);
  }
  {
    auto dropped = publisher.claim();  // destroyed uncommitted: abandoned
    CHECK(dropped.has_value());
    (*dropped)->instrument = 99;
  }
  {
    auto abandoned = publisher.claim();
    CHECK(abandoned.has_value());
    abandoned->abandon();
  }
  CHECK(publisher.offer(quote_for(0, 8)));
  for (std::uint64_t seq : {7, 8}) {
    auto message = subscriber.try_recv();
    CHECK(message.has_value());
    Quote expected = quote_for(0, seq);
    CHECK(std::memcmp(&**message, &expected, sizeof expected) == 0);
    subscriber.release(*message);
  }
  CHECK(!subscriber.try_recv().has_value());
  CHECK(publisher.info().published == 2);

  salias::Config raw_config;
  raw_config.name = unique("raw-claims");
  raw_config.capacity = 64 * 1024;
  auto raw = salias::FifoMpscChannel::create(raw_config);
  CHECK(raw.has_value());
  auto raw_channel = std::move(raw).value();
  auto raw_subscriber = raw_channel.subscriber();
  auto raw_publisher = raw_channel.publisher();
  {
    auto claim = raw_publisher.claim(16);
    CHECK(claim.has_value() && claim->bytes().size() == 16);
    std::memcpy(claim->bytes().data(), "claimed", 7);
    claim->commit(7);
  }
  // 150 messages of 1 to 150 bytes: three groups of the wrapper's batch.
  std::vector<std::vector<std::byte>> messages;
  for (std::size_t len = 1; len <= 150; ++len) messages.emplace_back(len, static_cast<std::byte>(len));
  std::vector<std::span<const std::byte>> spans(messages.begin(), messages.end());
  CHECK(raw_publisher.offer_batch(spans) == 150);
  auto first = raw_subscriber.try_recv();
  CHECK(first.has_value() && first->size() == 7 && std::memcmp(first->data(), "claimed", 7) == 0);
  raw_subscriber.release(*first);
  for (std::size_t len = 1; len <= 150; ++len) {
    auto message = raw_subscriber.try_recv();
    CHECK(message.has_value() && message->size() == len);
    CHECK(std::all_of(message->data(), message->data() + len, [&](std::byte b) { return b == static_cast<std::byte>(len); }));
    raw_subscriber.release(*message);
  }
  CHECK(!raw_subscriber.try_recv().has_value());
}

}  // namespace

int main() {
  bad_handles_are_refused();
  bad_arguments_are_refused();
  holding_and_claiming_are_states();
  types_and_kinds_are_checked_at_connect();
  status_reads_without_connecting();
  claims_and_raw_batches_through_the_wrapper();
  round_trip<salias::Kind::FifoMpsc>();
  round_trip<salias::Kind::FifoFanout>();
  round_trip<salias::Kind::OrderedMpsc>();
  round_trip<salias::Kind::OrderedFanout>();
  std::printf("abi_test: %d checks passed\n", checks);
  return 0;
}
