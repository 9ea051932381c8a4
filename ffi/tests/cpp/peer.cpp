// A C++ process on a salias channel, for the cross-language tests (ffi/tests/cross_language.rs):
//
//   peer publish KIND typed|raw NAME COUNT        connect, publish COUNT messages, exit 0
//   peer publish-forever KIND typed NAME          publish until killed ("ready" after the first)
//   peer subscribe KIND typed|raw NAME COUNT PUBLISHERS
//                                                 connect, subscribe, print "ready", receive
//                                                 COUNT messages from each of PUBLISHERS and
//                                                 check every one; exit 0 if all were right
//   peer mismatch KIND NAME                       connecting with another layout of Quote is
//                                                 refused with SALIAS_ERROR_TYPE_MISMATCH
//   peer create-swapped KIND NAME                 create a channel of the other layout, print
//                                                 "ready", hold it until stdin closes
//
// Messages: a typed one is quote_for(slot, index); a raw one is the index (8 bytes,
// little-endian), the slot (4 bytes) and 0 to 99 pattern bytes, so its length varies.

#include <chrono>
#include <cstdio>
#include <cstdlib>
#include <cstring>
#include <iostream>
#include <map>
#include <string>
#include <vector>

#include "messages.hpp"

namespace {

[[noreturn]] void fail(const std::string& what) {
  std::cerr << "peer: " << what << std::endl;
  std::exit(1);
}

salias::Kind kind_of(const std::string& name) {
  if (name == "FifoMpsc") return salias::Kind::FifoMpsc;
  if (name == "FifoFanout") return salias::Kind::FifoFanout;
  if (name == "OrderedMpsc") return salias::Kind::OrderedMpsc;
  if (name == "OrderedFanout") return salias::Kind::OrderedFanout;
  fail("unknown kind " + name);
}

bool ordered(salias::Kind kind) { return kind == salias::Kind::OrderedMpsc || kind == salias::Kind::OrderedFanout; }

std::vector<std::byte> raw_message(std::uint32_t slot, std::uint64_t index) {
  std::vector<std::byte> bytes(12 + index % 100);
  for (int i = 0; i < 8; ++i) bytes[i] = std::byte(index >> (8 * i));
  for (int i = 0; i < 4; ++i) bytes[8 + i] = std::byte(slot >> (8 * i));
  for (std::size_t i = 12; i < bytes.size(); ++i) bytes[i] = std::byte((slot * 31 + index + i) & 0xff);
  return bytes;
}

std::uint64_t little_endian(const std::byte* bytes, int len) {
  std::uint64_t value = 0;
  for (int i = 0; i < len; ++i) value |= static_cast<std::uint64_t>(bytes[i]) << (8 * i);
  return value;
}

/// Publishes `count` messages, in groups of 8 taking turns at the three ways to publish:
/// a blocking send each, a claim and commit each, one batch offer for the group.
template <salias::Kind K, class T>
int publish(const std::string& name, std::uint64_t count) {
  auto connected = salias::Channel<K, T>::connect(name);
  if (!connected) fail(connected.error().what());
  auto channel = std::move(connected).value();
  auto publisher = channel.publisher();
  const std::uint32_t slot = publisher.info().slot;
  constexpr bool typed = !std::is_same_v<T, salias::Bytes>;
  for (std::uint64_t first = 0; first < count; first += 8) {
    const std::uint64_t end = std::min(count, first + 8);
    switch ((first / 8) % 3) {
      case 0:
        for (std::uint64_t i = first; i < end; ++i) {
          if constexpr (typed) {
            publisher.send(quote_for(slot, i));
          } else {
            publisher.send(raw_message(slot, i));
          }
        }
        break;
      case 1:
        for (std::uint64_t i = first; i < end; ++i) {
          std::vector<std::byte> bytes;
          if constexpr (typed) {
            Quote quote = quote_for(slot, i);
            bytes.resize(sizeof quote);
            std::memcpy(bytes.data(), &quote, sizeof quote);
          } else {
            bytes = raw_message(slot, i);
          }
          void* place = nullptr;
          salias_code code;
          while ((code = salias_publisher_claim(publisher.c_handle(), bytes.size(), &place)) == SALIAS_BACKPRESSURED) {
          }
          if (code != SALIAS_OK) fail(salias_last_error());
          std::memcpy(place, bytes.data(), bytes.size());
          if (salias_publisher_commit(publisher.c_handle(), bytes.size()) != SALIAS_OK) fail(salias_last_error());
        }
        break;
      default: {
        std::uint64_t next = first;
        if constexpr (typed) {
          std::vector<Quote> quotes;
          for (std::uint64_t i = first; i < end; ++i) quotes.push_back(quote_for(slot, i));
          while (next < end) next += publisher.offer_batch(std::span<const Quote>(quotes).subspan(next - first));
        } else {
          std::vector<std::vector<std::byte>> messages;
          for (std::uint64_t i = first; i < end; ++i) messages.push_back(raw_message(slot, i));
          while (next < end) {
            std::vector<std::span<const std::byte>> spans;
            for (std::uint64_t i = next; i < end; ++i) spans.emplace_back(messages[i - first]);
            next += publisher.offer_batch(spans);
          }
        }
      }
    }
  }
  std::cout << "published " << count << std::endl;
  return 0;
}

template <salias::Kind K>
int publish_forever(const std::string& name) {
  auto connected = salias::Channel<K, Quote>::connect(name);
  if (!connected) fail(connected.error().what());
  auto channel = std::move(connected).value();
  auto publisher = channel.publisher();
  const std::uint32_t slot = publisher.info().slot;
  for (std::uint64_t i = 0;; ++i) {
    publisher.send(quote_for(slot, i));
    if (i == 0) std::cout << "ready" << std::endl;
  }
}

/// Checks each message: per publisher, indexes 0, 1, 2, ... and the content they imply;
/// Ordered, sequence numbers one after another.
template <class T>
struct Checker {
  salias::Kind kind = salias::Kind::FifoMpsc;
  std::map<std::uint32_t, std::uint64_t> next_index;
  std::uint64_t next_sequence = 0;
  bool first = true;

  void check(const salias::Message<T>& message) {
    const std::uint32_t slot = message.publisher_slot();
    if constexpr (std::is_same_v<T, salias::Bytes>) {
      if (message.size() < 12) fail("a raw message of " + std::to_string(message.size()) + " bytes");
      const std::uint64_t index = little_endian(message.data(), 8);
      if (little_endian(message.data() + 8, 4) != slot) fail("a raw message names another slot");
      auto expected = raw_message(slot, index);
      if (message.size() != expected.size() || std::memcmp(message.data(), expected.data(), expected.size()) != 0) {
        fail("raw message " + std::to_string(index) + " of slot " + std::to_string(slot) + " differs");
      }
      check_index(slot, index);
    } else {
      if (message->instrument >> 32 != slot) fail("a quote names another slot");
      check_quote(*message);
    }
    if (ordered(kind)) {
      if (message.gap_before() != 0) fail("a gap of " + std::to_string(message.gap_before()));
      if (!first && message.sequence() != next_sequence) {
        fail("sequence " + std::to_string(message.sequence()) + ", expected " + std::to_string(next_sequence));
      }
      next_sequence = message.sequence() + 1;
      first = false;
    }
  }

  /// A quote, received or copied out.
  void check_quote(const Quote& quote) {
    const auto slot = static_cast<std::uint32_t>(quote.instrument >> 32);
    const std::uint64_t index = quote.instrument & 0xffffffffu;
    Quote expected = quote_for(slot, index);
    if (std::memcmp(&quote, &expected, sizeof quote) != 0) {
      fail("quote " + std::to_string(index) + " of slot " + std::to_string(slot) + " differs");
    }
    check_index(slot, index);
  }

  void check_index(std::uint32_t slot, std::uint64_t index) {
    if (index != next_index[slot]) {
      fail("slot " + std::to_string(slot) + " sent index " + std::to_string(index) + ", expected " +
           std::to_string(next_index[slot]));
    }
    next_index[slot] = index + 1;
  }
};

template <salias::Kind K, class T>
int subscribe(const std::string& name, std::uint64_t count, std::uint32_t publishers) {
  auto connected = salias::Channel<K, T>::connect(name);
  if (!connected) fail(connected.error().what());
  auto channel = std::move(connected).value();
  auto subscriber = channel.subscriber();
  std::cout << "ready" << std::endl;
  Checker<T> checker;
  checker.kind = K;
  const std::uint64_t total = count * publishers;
  std::uint64_t received = 0;
  std::vector<T> array(16);
  while (received < total) {
    // Take turns: a blocking receive, a drain with a callback, and (typed) a drain into an array.
    switch (received % 3) {
      case 0: {
        auto message = subscriber.recv(std::chrono::seconds(30));
        if (!message) fail("no message within 30 s after " + std::to_string(received));
        checker.check(*message);
        subscriber.release(*message);
        ++received;
        break;
      }
      case 1:
        received += subscriber.drain(total - received, [&](const salias::Message<T>& message) { checker.check(message); });
        break;
      default:
        if constexpr (std::is_same_v<T, salias::Bytes>) {
          auto message = subscriber.try_recv();
          if (message) {
            checker.check(*message);
            subscriber.release(*message);
            ++received;
          }
        } else {
          std::size_t room = std::min<std::uint64_t>(array.size(), total - received);
          std::size_t got = subscriber.drain_into(std::span<T>(array).first(room));
          for (std::size_t i = 0; i < got; ++i) checker.check_quote(array[i]);
          // Copies carry no sequence number: the sequence check starts again after them.
          if (got > 0) checker.first = true;
          received += got;
        }
    }
  }
  std::cout << "received " << received << std::endl;
  return 0;
}

template <salias::Kind K>
int mismatch(const std::string& name) {
  auto connected = salias::Channel<K, SwappedQuote>::connect(name);
  if (connected) fail("a Quote of another layout was accepted");
  if (connected.error().code() != SALIAS_ERROR_TYPE_MISMATCH) fail(connected.error().what());
  std::cout << "refused: " << connected.error().what() << std::endl;
  return 0;
}

template <salias::Kind K>
int create_swapped(const std::string& name) {
  salias::Config config;
  config.name = name;
  auto created = salias::Channel<K, SwappedQuote>::create(config);
  if (!created) fail(created.error().what());
  std::cout << "ready" << std::endl;
  std::string line;
  while (std::getline(std::cin, line)) {
  }
  return 0;
}

template <salias::Kind K>
int run(const std::string& role, char** argv, int argc) {
  auto arg = [&](int i) -> std::string {
    if (i >= argc) fail("missing argument " + std::to_string(i));
    return argv[i];
  };
  if (role == "publish") {
    if (arg(3) == "typed") return publish<K, Quote>(arg(4), std::stoull(arg(5)));
    return publish<K, salias::Bytes>(arg(4), std::stoull(arg(5)));
  }
  if (role == "publish-forever") return publish_forever<K>(arg(4));
  if (role == "subscribe") {
    if (arg(3) == "typed") return subscribe<K, Quote>(arg(4), std::stoull(arg(5)), std::stoul(arg(6)));
    return subscribe<K, salias::Bytes>(arg(4), std::stoull(arg(5)), std::stoul(arg(6)));
  }
  if (role == "mismatch") return mismatch<K>(arg(3));
  if (role == "create-swapped") return create_swapped<K>(arg(3));
  fail("unknown role " + role);
}

}  // namespace

int main(int argc, char** argv) {
  if (argc < 3) fail("usage: peer ROLE KIND ...");
  try {
    switch (kind_of(argv[2])) {
      case salias::Kind::FifoMpsc:
        return run<salias::Kind::FifoMpsc>(argv[1], argv, argc);
      case salias::Kind::FifoFanout:
        return run<salias::Kind::FifoFanout>(argv[1], argv, argc);
      case salias::Kind::OrderedMpsc:
        return run<salias::Kind::OrderedMpsc>(argv[1], argv, argc);
      case salias::Kind::OrderedFanout:
        return run<salias::Kind::OrderedFanout>(argv[1], argv, argc);
    }
  } catch (const salias::Error& error) {
    fail(std::string(error.code_name()) + ": " + error.what());
  }
  return 1;
}
