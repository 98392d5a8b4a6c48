/* The pad firmware's real ELF on a simulated ATmega328P (libsimavr), its ADC inputs driven
 * by force curves and its UART read. Time is the simulator's: cycle-accurate at 16 MHz.
 *
 *   pad_harness ELF SCRIPT
 *
 * SCRIPT lines: "ZONE ONSET_US PEAK RISE_US HOLD_US" (one hand on a zone: a linear rise to
 * PEAK ADC counts, held, then released), "SEND US WORD" (a command line sent to the pad's
 * UART at that time, e.g. HELLO or STREAM_1, '_' for a space) and "END US" (how long to run). Each UART line
 * is printed as "UART <simulated us when its last byte left> <line>".
 */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
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
static int buf_len;

static double now_us(void) { return avr->cycle * 1e6 / avr->frequency; }

static void uart_out(struct avr_irq_t *irq, uint32_t value, void *param) {
  (void)irq; (void)param;
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

int main(int argc, char **argv) {
  if (argc != 3) { fprintf(stderr, "usage: pad_harness ELF SCRIPT\n"); return 2; }
  elf_firmware_t fw;
  memset(&fw, 0, sizeof fw);
  if (elf_read_firmware(argv[1], &fw)) { fprintf(stderr, "%s: cannot read\n", argv[1]); return 2; }
  FILE *s = fopen(argv[2], "r");
  if (!s) { fprintf(stderr, "%s: cannot read\n", argv[2]); return 2; }
  double end = 1e6;
  char word[16];
  int cap = 0;
  while (fscanf(s, "%15s", word) == 1) {
    if (!strcmp(word, "END")) { if (fscanf(s, "%lf", &end) != 1) return 2; continue; }
    if (!strcmp(word, "SEND")) {
      if (n_send >= 16 || fscanf(s, "%lf %22s", &send_at[n_send], send_text[n_send]) != 2) return 2;
      n_send++;
      continue;
    }
    if (n_hands == cap) {
      cap = cap ? 2 * cap : 64;
      hands = realloc(hands, cap * sizeof *hands);
      if (!hands) return 2;
    }
    hand *h = &hands[n_hands++];
    h->zone = atoi(word);
    if (fscanf(s, "%lf %lf %lf %lf", &h->onset, &h->peak, &h->rise, &h->hold) != 4) return 2;
  }
  fclose(s);
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
  double next = 0;
  while (now_us() < end) {
    double t = now_us();
    if (t >= next) {             /* the inputs, every 2 us of simulated time */
      for (int z = 0; z < 4; z++)
        avr_raise_irq(adc[z], (uint32_t)(force(z, t) * 5000.0 / 1023.0));
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
