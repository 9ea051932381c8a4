// The quote the cross-language examples exchange: the C++ twin of the Rust struct in
// common/quote.rs. SALIAS_MESSAGE describes it to salias once; connect checks it against the
// Rust type field by field, so a change on one side only is refused, not misread.
#pragma once

#include <cstdint>

#include <salias/salias.hpp>

struct Quote {
  std::uint64_t instrument;
  double bid;
  double ask;
  std::uint32_t bid_size;
  std::uint32_t ask_size;
};
SALIAS_MESSAGE(Quote, "Quote", 1, instrument, bid, ask, bid_size, ask_size);
