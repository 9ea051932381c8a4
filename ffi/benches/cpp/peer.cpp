// The C++ side of benches/cpp_rust.rs: the same roles as the Rust side, through salias.hpp,
// each a process pinned to a core, started together by the run's barrier.
//
//   peer publish NAME COUNT CORE        offers COUNT Msg64s one by one
//   peer publish_batch NAME COUNT CORE  offers them 16 at a time (offer_batch)
//   peer publish_claim NAME COUNT CORE  claims each in the ring, writes it there, commits
//   peer drain NAME COUNT CORE          creates the channel, receives with drain(256)
//   peer try_recv NAME COUNT CORE       creates the channel, receives with try_recv/release
//   peer ping NAME COUNT CORE           COUNT round trips over NAME-ping / NAME-pong
//   peer pong NAME COUNT CORE           echoes them
//
// Each prints one `REPORT {json}` line. Every message is checked, as on the Rust side.

#include <fcntl.h>
#include <sched.h>
#include <sys/mman.h>
#include <time.h>
#include <unistd.h>

#include <algorithm>
#include <array>
#include <atomic>
#include <cstdint>
#include <cstdio>
#include <cstdlib>
#include <string>
#include <thread>
#include <vector>

#include <salias/salias.hpp>

// benches/common/msg64.rs's Msg64, described for the channel's type check.
struct Msg64 {
  std::uint64_t producer;
  std::uint64_t seq;
  std::uint64_t words[6];
};
SALIAS_MESSAGE(Msg64, "Msg64", 0, producer, seq, words);

namespace {

[[noreturn]] void fail(const std::string& what) {
  std::fprintf(stderr, "peer: %s\n", what.c_str());
  std::exit(1);
}

std::uint64_t now_ns() {
  timespec t{};
  clock_gettime(CLOCK_MONOTONIC, &t);
  return static_cast<std::uint64_t>(t.tv_sec) * 1'000'000'000u + static_cast<std::uint64_t>(t.tv_nsec);
}

// As Msg64::new(0, seq) on the Rust side: every field in one initialiser, which g++ -O2
// compiles to stores as rustc does (a loop over `words` it leaves as a loop).
Msg64 message(std::uint64_t seq) { return Msg64{0, seq, {seq, seq, seq, seq, seq, seq}}; }  // seq ^ producer, producer 0

// What a refused offer does before it tries again, as the Rust roles' std::hint::spin_loop():
// a pause, so a publisher that finds no room does not keep the line its subscriber is
// releasing room on away from it.
inline void spin_loop() {
#if defined(__x86_64__) || defined(__i386__)
  __builtin_ia32_pause();
#elif defined(__aarch64__)
  asm volatile("yield");
#endif
}

void check(const Msg64& m, std::uint64_t expected) {
  if (m.seq != expected || m.producer != 0 || m.words[5] != m.seq) {
    fail("message " + std::to_string(expected) + " arrived as seq " + std::to_string(m.seq));
  }
}

// support/src/barrier.rs: /dev/shm/NAME.barrier, word 0 counts arrivals, word 1 is go.
class Barrier {
 public:
  explicit Barrier(const std::string& name) {
    std::string path = "/dev/shm/" + name + ".barrier";
    int fd = open(path.c_str(), O_RDWR);
    if (fd < 0) fail("cannot open " + path);
    void* page = mmap(nullptr, 4096, PROT_READ | PROT_WRITE, MAP_SHARED, fd, 0);
    close(fd);
    if (page == MAP_FAILED) fail("cannot map " + path);
    words_ = static_cast<std::uint64_t*>(page);
  }
  void arrive_and_wait() {
    // SYNC POINT arrival / go: as Barrier::arrive_and_wait on the Rust side.
    std::atomic_ref<std::uint64_t>(words_[0]).fetch_add(1, std::memory_order_acq_rel);
    while (std::atomic_ref<std::uint64_t>(words_[1]).load(std::memory_order_acquire) == 0) {
    }
  }
  // Word 8 counts roles done: a subscriber that has everything lets its publisher go.
  void done() { std::atomic_ref<std::uint64_t>(words_[8]).fetch_add(1, std::memory_order_acq_rel); }
  void wait_done() {
    while (std::atomic_ref<std::uint64_t>(words_[8]).load(std::memory_order_acquire) == 0) {
      std::this_thread::sleep_for(std::chrono::microseconds(100));
    }
  }

 private:
  std::uint64_t* words_;
};

void pin(int core) {
  cpu_set_t set;
  CPU_ZERO(&set);
  CPU_SET(core, &set);
  if (sched_setaffinity(0, sizeof set, &set) != 0) fail("cannot pin to core " + std::to_string(core));
}

template <class C>
C connect(const std::string& name) {
  for (int attempt = 0; attempt < 5000; ++attempt) {
    auto connected = C::connect(name);
    if (connected) return std::move(connected).value();
    if (connected.error().code() != SALIAS_ERROR_NOT_FOUND) fail(connected.error().what());
    std::this_thread::sleep_for(std::chrono::milliseconds(1));
  }
  fail("no channel " + name + " appeared");
}

using Channel = salias::FifoMpsc<Msg64>;

Channel create(const std::string& name, std::size_t capacity) {
  salias::Config config;
  config.name = name;
  config.capacity = capacity;
  auto created = Channel::create(config);
  if (!created) fail(created.error().what());
  return std::move(created).value();
}

enum class How { One, Batch, Claim };

void publish(const std::string& name, std::uint64_t count, How how) {
  auto channel = connect<Channel>(name);
  auto publisher = channel.publisher();
  Barrier barrier(name);
  std::uint64_t attempts = 0, seq = 0;
  std::array<Msg64, 16> batch{};
  barrier.arrive_and_wait();
  std::uint64_t started = now_ns();
  while (seq < count) {
    ++attempts;
    if (how == How::Batch) {
      std::size_t n = std::min<std::uint64_t>(batch.size(), count - seq);
      for (std::size_t i = 0; i < n; ++i) batch[i] = message(seq + i);
      std::size_t published = publisher.offer_batch(std::span<const Msg64>(batch.data(), n));
      if (published == 0) spin_loop();
      seq += published;
    } else if (how == How::Claim) {
      if (auto claim = publisher.claim()) {
        **claim = message(seq);
        claim->commit();
        ++seq;
      } else {
        spin_loop();
      }
    } else if (publisher.offer(message(seq))) {
      ++seq;
    } else {
      spin_loop();
    }
  }
  std::uint64_t elapsed = now_ns() - started;
  barrier.wait_done();
  std::printf("REPORT {\"elapsed_ns\":%llu,\"messages\":%llu,\"attempts\":%llu}\n",
              static_cast<unsigned long long>(elapsed), static_cast<unsigned long long>(count),
              static_cast<unsigned long long>(attempts));
}

void subscribe(const std::string& name, std::uint64_t count, std::size_t capacity, bool drain) {
  auto channel = create(name, capacity);
  auto subscriber = channel.subscriber();
  Barrier barrier(name);
  std::uint64_t received = 0, checksum = 0;
  barrier.arrive_and_wait();
  std::uint64_t started = now_ns();
  while (received < count) {
    if (drain) {
      subscriber.drain(256, [&](const salias::Message<Msg64>& m) {
        check(*m, received);
        checksum += m->seq;
        ++received;
      });
    } else if (auto m = subscriber.try_recv()) {
      check(**m, received);
      checksum += (*m)->seq;
      ++received;
      subscriber.release(*m);
    }
  }
  std::uint64_t elapsed = now_ns() - started;
  barrier.done();
  if (checksum != count * (count - 1) / 2) fail("checksum");
  std::printf("REPORT {\"elapsed_ns\":%llu,\"messages\":%llu}\n", static_cast<unsigned long long>(elapsed),
              static_cast<unsigned long long>(received));
}

// One message in flight; the pinger stamps every 16th trip.
void ping_pong(const std::string& name, std::uint64_t count, bool pinger) {
  std::string in = name + (pinger ? "-pong" : "-ping"), out = name + (pinger ? "-ping" : "-pong");
  auto inbound = create(in, 64 * 1024);
  auto subscriber = inbound.subscriber();
  auto outbound = connect<Channel>(out);
  auto publisher = outbound.publisher();
  Barrier barrier(name);
  std::vector<std::uint64_t> stamps;
  stamps.reserve(count / 16 + 1);
  barrier.arrive_and_wait();
  for (std::uint64_t i = 0; i < count; ++i) {
    if (pinger) {
      if (i % 16 == 0) stamps.push_back(now_ns());
      while (!publisher.offer(message(i))) {
        spin_loop();
      }
    }
    for (;;) {
      if (auto m = subscriber.try_recv()) {
        check(**m, i);
        subscriber.release(*m);
        break;
      }
    }
    if (!pinger) {
      while (!publisher.offer(message(i))) {
        spin_loop();
      }
    }
  }
  if (pinger) {
    stamps.push_back(now_ns());
    barrier.done();
    std::vector<std::uint64_t> one_way;  // ns ×100 per one-way trip, each over 16 trips
    for (std::size_t k = 1; k + 1 < stamps.size(); ++k) one_way.push_back((stamps[k] - stamps[k - 1]) * 100 / 32);
    std::sort(one_way.begin(), one_way.end());
    std::printf("REPORT {\"one_way_centi_ns_p50\":%llu,\"samples\":%zu}\n",
                static_cast<unsigned long long>(one_way[one_way.size() / 2]), one_way.size());
  } else {
    barrier.wait_done();  // the pinger has the last echo
    std::printf("REPORT {}\n");
  }
}

}  // namespace

int main(int argc, char** argv) {
  if (argc != 5) fail("usage: peer ROLE NAME COUNT CORE");
  std::string role = argv[1], name = argv[2];
  std::uint64_t count = std::strtoull(argv[3], nullptr, 10);
  pin(std::atoi(argv[4]));
  const char* ring = std::getenv("SALIAS_BENCH_RING");
  std::size_t capacity = ring ? std::strtoull(ring, nullptr, 10) : (1u << 20);
  try {
    if (role == "publish") publish(name, count, How::One);
    else if (role == "publish_batch") publish(name, count, How::Batch);
    else if (role == "publish_claim") publish(name, count, How::Claim);
    else if (role == "drain") subscribe(name, count, capacity, true);
    else if (role == "try_recv") subscribe(name, count, capacity, false);
    else if (role == "ping") ping_pong(name, count, true);
    else if (role == "pong") ping_pong(name, count, false);
    else fail("unknown role " + role);
  } catch (const salias::Error& error) {
    fail(std::string(error.code_name()) + ": " + error.what());
  }
  return 0;
}
