/* A C process on a typed channel a Rust process created: `typed_c KIND NAME COUNT`
 * connects with the quote described field by field (SALIAS_FIELD) and publishes COUNT
 * quote_for(slot, index) quotes (messages.hpp's formula), as ffi/tests/cpp.rs checks.
 * `typed_c KIND NAME 0 wrong` describes `bid` as f32 and expects the connect refused. */
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include <salias/salias.h>

struct quote {
  uint64_t instrument;
  double bid;
  double ask;
  uint8_t venue[4];
  uint32_t size;
};

static int fail(const char *call, salias_code code) {
  fprintf(stderr, "typed_c: %s: %s: %s\n", call, salias_code_name(code), salias_last_error());
  return 1;
}

int main(int argc, char **argv) {
  if (argc < 4) {
    fprintf(stderr, "usage: typed_c KIND NAME COUNT [wrong]\n");
    return 2;
  }
  uint32_t kind = (uint32_t)atoi(argv[1]);
  unsigned long long count = strtoull(argv[3], NULL, 10);
  int wrong = argc > 4 && strcmp(argv[4], "wrong") == 0;

  salias_field fields[] = {
      SALIAS_FIELD(struct quote, instrument, "u64"),
      SALIAS_FIELD(struct quote, bid, "f64"),
      SALIAS_FIELD(struct quote, ask, "f64"),
      SALIAS_FIELD(struct quote, venue, "[u8;4]"),
      SALIAS_FIELD(struct quote, size, "u32"),
  };
  if (wrong) fields[1].type_label = "f32";
  salias_message_type quote_type = {"Quote", sizeof(struct quote), _Alignof(struct quote), 3, fields,
                                    sizeof fields / sizeof fields[0]};

  salias_channel *channel = NULL;
  salias_code code = salias_channel_connect(kind, argv[2], &quote_type, &channel);
  if (wrong) {
    if (code != SALIAS_ERROR_TYPE_MISMATCH) return fail("a wrong description was not refused", code);
    printf("refused: %s\n", salias_last_error());
    return 0;
  }
  if (code != SALIAS_OK) return fail("salias_channel_connect", code);
  salias_publisher *publisher = NULL;
  if ((code = salias_channel_publisher(channel, &publisher)) != SALIAS_OK) return fail("publisher", code);
  salias_publisher_info info;
  if ((code = salias_publisher_info_get(publisher, &info)) != SALIAS_OK) return fail("info", code);

  for (unsigned long long index = 0; index < count; ++index) {
    struct quote quote;
    memset(&quote, 0, sizeof quote);
    quote.instrument = ((uint64_t)info.slot << 32) | index;
    quote.bid = (double)index * 0.25;
    quote.ask = quote.bid + 0.5;
    quote.venue[0] = 'X';
    quote.venue[1] = (uint8_t)('0' + info.slot % 10);
    quote.venue[2] = (uint8_t)(index % 251);
    quote.size = (uint32_t)(index * 7 % 1000);
    if ((code = salias_publisher_send(publisher, &quote, sizeof quote, -1)) != SALIAS_OK) return fail("send", code);
  }
  printf("published %llu\n", count);
  salias_publisher_free(publisher);
  salias_channel_free(channel);
  return 0;
}
