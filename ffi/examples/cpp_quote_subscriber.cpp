// Creates the typed OrderedMpsc channel and prints the quotes a Rust (or any) publisher
// sends: run `cpp_quote_subscriber NAME COUNT`, then `rust_quote_publisher NAME COUNT`.
#include <cstdio>
#include <cstring>
#include <iostream>
#include <string>

#include "quote.hpp"

int main(int argc, char** argv) {
  salias::Config config;
  config.name = argc > 1 ? argv[1] : "quotes-demo";
  config.num_producers = 2;
  const std::uint64_t count = argc > 2 ? std::stoull(argv[2]) : 10;

  auto created = salias::OrderedMpsc<Quote>::create(config);
  if (!created) {
    std::cerr << created.error().code_name() << ": " << created.error().what() << "\n";
    return 1;
  }
  auto channel = std::move(created).value();
  auto subscriber = channel.subscriber();
  for (std::uint64_t index = 0; index < count; ++index) {
    auto message = subscriber.recv();
    const Quote& quote = **message;
    if (quote.instrument != index) {
      std::cerr << "quote " << index << " arrived as instrument " << quote.instrument << "\n";
      return 2;
    }
    std::printf("#%llu from slot %u: instrument %llu bid %.2f x %u ask %.2f x %u\n",
                static_cast<unsigned long long>(message->sequence()), message->publisher_slot(),
                static_cast<unsigned long long>(quote.instrument), quote.bid, quote.bid_size, quote.ask,
                quote.ask_size);
    subscriber.release(*message);
  }
}
