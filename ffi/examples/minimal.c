/* The smallest C program on a salias channel: create it, publish a message, receive it in
 * place, release it. Every call returns a salias_code; salias_last_error() says why one
 * failed. */
#include <stdio.h>
#include <string.h>
#include <unistd.h>

#include <salias/salias.h>

static int failed(const char *call, salias_code code) {
  fprintf(stderr, "%s: %s: %s\n", call, salias_code_name(code), salias_last_error());
  return 1;
}

int main(void) {
  char name[64];
  snprintf(name, sizeof name, "minimal-c-%d", (int)getpid());

  salias_config config = salias_config_default(name);
  config.capacity = 64 * 1024;

  salias_channel *channel = NULL;
  salias_code code = salias_channel_create(SALIAS_FIFO_MPSC, &config, NULL, &channel);
  if (code != SALIAS_OK) return failed("salias_channel_create", code);

  salias_publisher *publisher = NULL;
  salias_subscriber *subscriber = NULL;
  if ((code = salias_channel_publisher(channel, &publisher)) != SALIAS_OK) return failed("publisher", code);
  if ((code = salias_channel_subscriber(channel, &subscriber)) != SALIAS_OK) return failed("subscriber", code);

  const char text[] = "hello from C";
  if ((code = salias_publisher_offer(publisher, text, sizeof text)) != SALIAS_OK) return failed("offer", code);

  salias_message message;
  if ((code = salias_subscriber_recv(subscriber, 1000000000, &message)) != SALIAS_OK) return failed("recv", code);
  printf("received %zu bytes from publisher slot %u: %s\n", message.len, message.publisher_slot,
         (const char *)message.data);
  int same = message.len == sizeof text && memcmp(message.data, text, sizeof text) == 0;
  if ((code = salias_subscriber_release(subscriber)) != SALIAS_OK) return failed("release", code);

  salias_subscriber_free(subscriber);
  salias_publisher_free(publisher);
  salias_channel_free(channel);
  return same ? 0 : 2;
}
