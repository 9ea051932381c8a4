// The typed messages the cross-language tests exchange: the same layouts as the Rust
// side's `#[derive(SaliasMessage)]` structs in ffi/tests/cpp.rs.
#pragma once

#include <cstdint>

#include <salias/salias.hpp>

struct Quote {
  std::uint64_t instrument;
  double bid;
  double ask;
  std::uint8_t venue[4];
  std::uint32_t size;
};
SALIAS_MESSAGE(Quote, "Quote", 3, instrument, bid, ask, venue, size);

// Quote with its prices swapped: same size, same name, another layout.
struct SwappedQuote {
  std::uint64_t instrument;
  double ask;
  double bid;
  std::uint8_t venue[4];
  std::uint32_t size;
};
SALIAS_MESSAGE(SwappedQuote, "Quote", 3, instrument, ask, bid, venue, size);

// The quote publisher `publisher` sends as its `index`th message.
inline Quote quote_for(std::uint32_t publisher, std::uint64_t index) {
  Quote quote{};
  quote.instrument = (static_cast<std::uint64_t>(publisher) << 32) | index;
  quote.bid = static_cast<double>(index) * 0.25;
  quote.ask = quote.bid + 0.5;
  quote.venue[0] = 'X';
  quote.venue[1] = static_cast<std::uint8_t>('0' + publisher % 10);
  quote.venue[2] = static_cast<std::uint8_t>(index % 251);
  quote.venue[3] = 0;
  quote.size = static_cast<std::uint32_t>(index * 7 % 1000);
  return quote;
}
