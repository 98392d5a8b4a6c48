/* The pad firmware's real ELF on a simulated ATmega328P (libsimavr), its ADC inputs driven
 * by force curves and its UART read. Time is the simulator's: cycle-accurate at 16 MHz.
 *
 *   pad_harness ELF SCRIPT
 *   pad_harness ELF --live EVERY_S [SECONDS]
 *
 * SCRIPT lines: "ZONE ONSET_US PEAK RISE_US HOLD_US" (one hand on a zone: a linear rise to
 * PEAK ADC counts, held, then released), "SEND US WORD" (a command line sent to the pad's
 * UART at that time, e.g. HELLO or STREAM_1, '_' for a space), "NOISE COUNTS" (uniform
 * noise of +-COUNTS on every input), "BASE ZONE COUNTS" (a zone that reads this much at
 * rest: wired wrong, or a sensor preloaded) and "END US" (how long to run). Each UART line
 * is printed as "UART <simulated us when its last byte left> <line>".
 *
 * --live: the pad as a serial device (`companion pad-sim --firmware`): the simulation runs
 * at wall-clock speed behind a pseudo-terminal (its path printed as "PTY <path>"), the
 * UART's bytes go both ways, and every EVERY_S seconds a random hand lands (sometimes a
 * second one a few milliseconds behind), said as "HAND <zone> +<ms>" on stdout.
 */
#include <fcntl.h>
#include <pty.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>
#include <unistd.h>
#include "sim_avr.h"
#include "sim_elf.h"
#include "avr_adc.h"
#include "avr_uart.h"
#include "sim_irq.h"

typedef struct { int zone; double onset, peak, rise, hold; } hand;
static hand *hands;
static int n_hands, first_live;    /* hands sorted by onset; those before first_live are over */
static avr_t *avr;
static char buf[256];
static double send_at[16];
static char send_text[16][24];
static int n_send, sent;
static double noise, base[4];
static int pty_fd = -1;         /* --live: the pseudo-terminal's master side */
static int cap;
static int buf_len;

static double now_us(void) { return avr->cycle * 1e6 / avr->frequency; }

static void uart_out(struct avr_irq_t *irq, uint32_t value, void *param) {
  (void)irq; (void)param;
  if (pty_fd >= 0) {
    uint8_t b = (uint8_t)value;
    if (write(pty_fd, &b, 1) < 0) { /* nobody reading yet: the byte is dropped, as on a wire */ }
    return;
  }
  if (value == '\n') {
    buf[buf_len] = 0;
    printf("UART %.1f %s\n", now_us(), buf);
    buf_len = 0;
  } else if (buf_len < (int)sizeof buf - 1) {
    buf[buf_len++] = (char)value;
  }
}

static int by_onset(const void *a, const void *b) {
  double d = ((const hand *)a)->onset - ((const hand *)b)->onset;
  return (d > 0) - (d < 0);
}

static double force(int zone, double t) {
  double f = 0;
  while (first_live < n_hands &&
         t > hands[first_live].onset + 2 * hands[first_live].rise + hands[first_live].hold)
    first_live++;
  for (int i = first_live; i < n_hands && hands[i].onset <= t; i++) {
    hand *h = &hands[i];
    if (h->zone != zone) continue;
    double dt = t - h->onset, v;
    if (dt < h->rise) v = h->peak * dt / h->rise;
    else if (dt < h->rise + h->hold) v = h->peak;
    else if (dt < h->rise * 2 + h->hold) v = h->peak * (1 - (dt - h->rise - h->hold) / h->rise);
    else v = 0;
    if (v > f) f = v;
  }
  return f;
}

static hand *add_hand(void) {
  if (n_hands == cap) {
    cap = cap ? 2 * cap : 64;
    hands = realloc(hands, cap * sizeof *hands);
    if (!hands) exit(2);
  }
  return &hands[n_hands++];
}

static double wall_us(void) {
  struct timespec ts;
  clock_gettime(CLOCK_MONOTONIC, &ts);
  return ts.tv_sec * 1e6 + ts.tv_nsec / 1e3;
}

int main(int argc, char **argv) {
  int live = argc >= 4 && !strcmp(argv[2], "--live");
  if (argc != 3 && !live) {
    fprintf(stderr, "usage: pad_harness ELF SCRIPT | pad_harness ELF --live EVERY_S [SECONDS]\n");
    return 2;
  }
  elf_firmware_t fw;
  memset(&fw, 0, sizeof fw);
  if (elf_read_firmware(argv[1], &fw)) { fprintf(stderr, "%s: cannot read\n", argv[1]); return 2; }
  double end = 1e6, every = 0;
  FILE *s = NULL;
  if (live) {
    every = atof(argv[3]) * 1e6;
    end = argc > 4 ? atof(argv[4]) * 1e6 : 1e18;
    int slave;
    char name[128];
    if (every <= 0 || openpty(&pty_fd, &slave, name, NULL, NULL)) {
      fprintf(stderr, "pad_harness: cannot open a pseudo-terminal\n");
      return 2;
    }
    fcntl(pty_fd, F_SETFL, fcntl(pty_fd, F_GETFL) | O_NONBLOCK);
    printf("PTY %s\n", name);
    fflush(stdout);
  } else if (!(s = fopen(argv[2], "r"))) {
    fprintf(stderr, "%s: cannot read\n", argv[2]);
    return 2;
  }
  char word[16];
  while (s && fscanf(s, "%15s", word) == 1) {
    if (!strcmp(word, "END")) { if (fscanf(s, "%lf", &end) != 1) return 2; continue; }
    if (!strcmp(word, "NOISE")) { if (fscanf(s, "%lf", &noise) != 1) return 2; continue; }
    if (!strcmp(word, "BASE")) {
      int z;
      double v;
      if (fscanf(s, "%d %lf", &z, &v) != 2 || z < 0 || z > 3) return 2;
      base[z] = v;
      continue;
    }
    if (!strcmp(word, "SEND")) {
      if (n_send >= 16 || fscanf(s, "%lf %22s", &send_at[n_send], send_text[n_send]) != 2) return 2;
      n_send++;
      continue;
    }
    hand *h = add_hand();
    h->zone = atoi(word);
    if (fscanf(s, "%lf %lf %lf %lf", &h->onset, &h->peak, &h->rise, &h->hold) != 4) return 2;
  }
  if (s) fclose(s);
  qsort(hands, n_hands, sizeof *hands, by_onset);
  avr = avr_make_mcu_by_name("atmega328p");
  if (!avr) return 2;
  avr_init(avr);
  avr->frequency = 16000000;
  avr->vcc = avr->avcc = avr->aref = 5000;
  avr_load_firmware(avr, &fw);
  /* Our own UART reader: no console echo. */
  uint32_t flags = 0;
  avr_ioctl(avr, AVR_IOCTL_UART_GET_FLAGS('0'), &flags);
  flags &= ~AVR_UART_FLAG_STDIO;
  avr_ioctl(avr, AVR_IOCTL_UART_SET_FLAGS('0'), &flags);
  avr_irq_register_notify(avr_io_getirq(avr, AVR_IOCTL_UART_GETIRQ('0'), UART_IRQ_OUTPUT),
                          uart_out, NULL);
  avr_irq_t *uart_in = avr_io_getirq(avr, AVR_IOCTL_UART_GETIRQ('0'), UART_IRQ_INPUT);
  avr_irq_t *adc[4];
  for (int z = 0; z < 4; z++) adc[z] = avr_io_getirq(avr, AVR_IOCTL_ADC_GETIRQ, ADC_IRQ_ADC0 + z);
  double next = 0, next_hand = every, next_pace = 0, wall0 = wall_us();
  srand(1);
  while (now_us() < end) {
    double t = now_us();
    if (live && t >= next_pace) {   /* keep to the wall clock; pass the host's bytes in */
      double ahead = t - (wall_us() - wall0);
      if (ahead > 0) usleep((useconds_t)ahead);
      uint8_t in[64];
      ssize_t n = read(pty_fd, in, sizeof in);
      for (ssize_t i = 0; i < n; i++) avr_raise_irq(uart_in, in[i]);
      if (t >= next_hand) {
        hand *h = add_hand();
        *h = (hand){rand() % 4, t + 100, 300 + rand() % 600, 500 + rand() % 1000, 40000};
        printf("HAND %d +0.0\n", h->zone);
        if (rand() % 10 < 4) {
          hand *g = add_hand();
          *g = (hand){(h->zone + 1 + rand() % 3) % 4, h->onset + 200 + rand() % 30000,
                      300 + rand() % 600, 500 + rand() % 1000, 40000};
          printf("HAND %d +%.1f\n", g->zone, (g->onset - h->onset) / 1000);
        }
        fflush(stdout);
        next_hand += every;
      }
      next_pace = t + 1000;
    }
    if (t >= next) {             /* the inputs, every 2 us of simulated time */
      for (int z = 0; z < 4; z++) {
        double v = base[z] + force(z, t) + noise * (2.0 * rand() / RAND_MAX - 1.0);
        v = v < 0 ? 0 : v > 1023 ? 1023 : v;
        avr_raise_irq(adc[z], (uint32_t)(v * 5000.0 / 1023.0));
      }
      next = t + 2.0;
      if (sent < n_send && t >= send_at[sent]) {   /* a command line, byte by byte */
        for (const char *c = send_text[sent]; *c; c++)   /* '_' stands for a space */
          avr_raise_irq(uart_in, (uint8_t)(*c == '_' ? ' ' : *c));
        avr_raise_irq(uart_in, '\n');
        sent++;
      }
    }
    int state = avr_run(avr);
    if (state == cpu_Done || state == cpu_Crashed) break;
  }
  return 0;
}
