// Connects to the typed OrderedMpsc channel a Rust (or any) subscriber created and
// publishes quotes: run `rust_quote_subscriber NAME COUNT`, then `cpp_quote_publisher NAME
// COUNT`. Its Quote is checked against the Rust one at connect.
#include <chrono>
#include <iostream>
#include <string>
#include <thread>

#include "quote.hpp"

Quote quote(std::uint64_t index) {
  return Quote{index, 100.0 + index * 0.01, 100.02 + index * 0.01, static_cast<std::uint32_t>(index % 500 + 1),
               static_cast<std::uint32_t>(index % 300 + 1)};
}

int main(int argc, char** argv) {
  const std::string name = argc > 1 ? argv[1] : "quotes-demo";
  const std::uint64_t count = argc > 2 ? std::stoull(argv[2]) : 10;

  // The subscriber creates the channel: wait for it a little.
  auto connected = salias::OrderedMpsc<Quote>::connect(name);
  for (int attempt = 0; !connected && connected.error().code() == SALIAS_ERROR_NOT_FOUND && attempt < 500; ++attempt) {
    std::this_thread::sleep_for(std::chrono::milliseconds(20));
    connected = salias::OrderedMpsc<Quote>::connect(name);
  }
  if (!connected) {
    std::cerr << connected.error().code_name() << ": " << connected.error().what() << "\n";
    return 1;
  }
  auto channel = std::move(connected).value();
  auto publisher = channel.publisher();
  for (std::uint64_t index = 0; index < count; ++index) publisher.send(quote(index));
  std::cout << "published " << count << " quotes to " << name << "\n";
}
