// The C++ side of benches/instructions.rs: the same 16-message rounds through salias.hpp,
// for counting with callgrind what the C ABI adds per message to Rust's own calls.
//
//   instructions ROUNDS single|batch
//
// single: 16 `offer`s, then one `drain_into`; batch: one `offer_batch` of 16. Build
// against the release static library and compare two round counts, as for the Rust
// workloads (the difference cancels the setup); `single` and `batch` of
// benches/instructions.rs are the Rust twins:
//
//   RUSTFLAGS="--cfg rustix_use_libc" cargo build --release -p salias-c
//   g++ -std=c++20 -O2 -I ffi/include ffi/benches/cpp/instructions.cpp target/release/libsalias_c.a -lpthread -ldl -lm -o /tmp/cpp-instructions
//   for n in 100000 200000; do
//     valgrind --tool=callgrind --callgrind-out-file=/tmp/cpp.out /tmp/cpp-instructions $n single 2>&1 | grep Collected
//   done

#include <unistd.h>

#include <array>
#include <cstdint>
#include <cstdio>
#include <cstdlib>
#include <cstring>
#include <string>

#include <salias/salias.hpp>

// benches/instructions.rs's Tick, described for the channel's type check.
struct Tick {
  std::uint64_t seq;
  std::uint64_t words[7];
};
SALIAS_MESSAGE(Tick, "Tick", 0, seq, words);

namespace {

constexpr std::size_t kBatch = 16;

[[noreturn]] void fail(const std::string& what) {
  std::fprintf(stderr, "instructions: %s\n", what.c_str());
  std::exit(1);
}

}  // namespace

int main(int argc, char** argv) {
  if (argc != 3) fail("usage: instructions ROUNDS single|batch");
  const std::uint64_t rounds = std::strtoull(argv[1], nullptr, 10);
  const std::string workload = argv[2];
  if (workload != "single" && workload != "batch") fail("unknown workload " + workload);

  salias::Config config;
  config.name = "instructions-cpp-" + std::to_string(getpid());
  auto created = salias::FifoMpsc<Tick>::create(config);
  if (!created) fail(created.error().what());
  auto channel = std::move(created).value();
  auto publisher = channel.publisher();
  auto subscriber = channel.subscriber();

  std::array<Tick, kBatch> batch{};
  std::array<Tick, kBatch> received{};
  std::uint64_t sum = 0;
  for (std::uint64_t round = 0; round < rounds; ++round) {
    for (std::size_t i = 0; i < kBatch; ++i) {
      std::uint64_t seq = round * kBatch + i;
      batch[i] = Tick{seq, {seq, seq, seq, seq, seq, seq, seq}};  // as Rust's Tick { seq, words: [seq; 7] }
    }
    if (workload == "batch") {
      if (publisher.offer_batch(std::span<const Tick>(batch)) != kBatch) fail("a batch did not fit");
    } else {
      for (const Tick& tick : batch) {
        if (!publisher.offer(tick)) fail("an offer found no room");
      }
    }
    if (subscriber.drain_into(std::span<Tick>(received)) != kBatch) fail("a drain missed messages");
    for (const Tick& tick : received) sum += tick.seq;
  }
  const std::uint64_t messages = rounds * kBatch;
  if (sum != messages * (messages - 1) / 2) fail("the checksum is wrong");
  std::printf("%llu rounds, checksum %llu\n", static_cast<unsigned long long>(rounds),
              static_cast<unsigned long long>(sum));
  return 0;
}
