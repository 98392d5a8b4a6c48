/* Host tests of the slap detection core, built and run by tests/test_firmware.py:
 *   gcc -O2 -std=c99 -I../slappad test_slapcore.c ../slappad/slapcore.c -lm
 * Prints figures as "FIGURE name value" lines; exits non-zero on a failed check. */
#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "slapcore.h"

static int failures = 0;
#define CHECK(cond, ...) do { if (!(cond)) { failures++; printf("FAIL %s:%d: ", __FILE__, __LINE__); \
    printf(__VA_ARGS__); printf("\n"); } } while (0)

/* Deterministic noise: xorshift + Box-Muller. */
static unsigned long long rs = 88172645463325252ULL;
static double urand(void) { rs ^= rs << 13; rs ^= rs >> 7; rs ^= rs << 17; return (rs >> 11) * (1.0 / 9007199254740992.0); }
static double nrand(void) { double u = urand() + 1e-12, v = urand(); return sqrt(-2 * log(u)) * cos(6.283185307 * v); }

/* A hand landing at t0: force rises as 1 - exp(-(t - t0)/tau), on a floor with noise. */
typedef struct { double t0, amp, tau; } hand;
static uint16_t sense(const hand *h, double t, double floor_v, double noise) {
    double v = floor_v + noise * nrand();
    if (h && t > h->t0) v += h->amp * (1 - exp(-(t - h->t0) / h->tau));
    if (v < 0) v = 0;
    if (v > 1023) v = 1023;
    return (uint16_t)(v + 0.5);
}

static void test_protocol(void) {
    char buf[96];
    sc_event e = {2, 123456u, 812};
    int n = sc_format_slap(buf, sizeof buf, &e, 17);
    CHECK(n > 0 && strncmp(buf, "SLAP 2 123456 812 17*", 21) == 0, "slap line %s", buf);
    unsigned ck = (unsigned)strtoul(buf + 21, NULL, 16);
    CHECK(ck == sc_checksum("SLAP 2 123456 812 17", 20), "checksum %s", buf);
    CHECK(buf[n - 1] == '\n', "line ends with newline");
    CHECK(sc_format_slap(buf, 10, &e, 17) < 0, "too small a buffer is refused");
    n = sc_format_hello(buf, sizeof buf, 4, 2500, 0);
    CHECK(n > 0 && strncmp(buf, "HELLO slappad 1 4 2500 0*", 25) == 0, "hello %s", buf);
    uint16_t f[4] = {1, 2, 3, 1023};
    n = sc_format_force(buf, sizeof buf, f, 4, 9);
    CHECK(n > 0 && strncmp(buf, "F 1 2 3 1023 9*", 15) == 0, "force %s", buf);
}

/* Runs one zone over [t_start, t_end) at period us; counts events, records the first. */
static int run_zone(const sc_config *cfg, sc_zone *z, const hand *h, int nh, double t_start,
                    double t_end, double period, double floor_v, double drift_per_s, double noise,
                    sc_event *first) {
    int events = 0;
    for (double t = t_start; t < t_end; t += period) {
        const hand *active = NULL;
        for (int i = 0; i < nh; i++) if (t > h[i].t0) active = &h[i];
        double fl = floor_v + drift_per_s * t / 1e6;
        sc_event e;
        if (sc_feed(z, cfg, 0, (uint32_t)t, sense(active, t, fl, noise), &e)) {
            if (!events && first) *first = e;
            events++;
        }
    }
    return events;
}

static void test_thresholds_hysteresis_mask_drift(void) {
    sc_config cfg; sc_default_config(&cfg);
    sc_zone z; sc_zone_init(&z);
    /* Noise alone, and slow thermal drift of 40 counts a second: no slap. */
    int n = run_zone(&cfg, &z, NULL, 0, 0, 3e6, 400, 100, 40, 3, NULL);
    CHECK(n == 0, "noise and drift made %d slaps", n);
    CHECK(abs((int)sc_floor(&z) - 220) < 12, "floor followed the drift: %u", sc_floor(&z));
    /* One slap, held for 80 ms, with a rebound inside the mask time: one event. */
    sc_zone_init(&z);
    hand h[2] = {{1e6, 500, 800}, {1.05e6, 450, 600}};
    sc_event first;
    n = run_zone(&cfg, &z, h, 2, 0, 1.3e6, 400, 100, 0, 2, &first);
    CHECK(n == 1, "a slap with a rebound gave %d events", n);
    CHECK(fabs((double)first.t_us - 1e6) < 60, "onset %lu vs 1000000", (unsigned long)first.t_us);
    CHECK(first.peak > 380 && first.peak < 520, "peak %u", first.peak);
    /* A second slap after the hand came off and the mask passed: a second event. */
    sc_zone_init(&z);
    n = 0;
    for (double t = 0; t < 2e6; t += 400) {
        hand a = {0.5e6, 500, 800}, b = {1.5e6, 500, 800};
        const hand *act = (t > 0.5e6 && t < 0.7e6) ? &a : (t > 1.5e6 ? &b : NULL);
        sc_event e;
        n += sc_feed(&z, &cfg, 0, (uint32_t)t, sense(act, t, 100, 2), &e);
    }
    CHECK(n == 2, "two separate slaps gave %d events", n);
    /* The micros() clock wraps every 71.6 minutes: a slap across the wrap still times right. */
    sc_zone_init(&z);
    double base = 4294967296.0 - 0.5e6;
    int got = 0;
    for (double t = base; t < base + 1e6; t += 400) {
        hand a = {base + 0.5e6 - 150, 500, 800};
        sc_event e;
        if (sc_feed(&z, &cfg, 0, (uint32_t)fmod(t, 4294967296.0), sense(&a, t, 100, 2), &e)) {
            double want = fmod(a.t0, 4294967296.0);
            double d = (double)e.t_us - want;
            CHECK(fabs(d) < 60, "onset across the wrap off by %.0f us", d);
            got++;
        }
    }
    CHECK(got == 1, "slap across the wrap: %d events", got);
}

/* Two hands on two zones, delta_us apart, random strength and speed, random sample phase;
 * zones are sampled one after another (a 4-zone pad at ~2.5 kHz per zone). */
static double order_accuracy(double delta_us, double period, int trials, double *median_err) {
    sc_config cfg; sc_default_config(&cfg);
    const double zones = 4;
    int correct = 0;
    double *errs = malloc(sizeof(double) * trials * 2);
    int ne = 0;
    for (int k = 0; k < trials; k++) {
        sc_zone za, zb; sc_zone_init(&za); sc_zone_init(&zb);
        double phase = urand() * period;
        hand a = {200000 + phase + urand() * 1000, 250 + 600 * urand(), 500 + 1000 * urand()};
        hand b = a;
        b.t0 = a.t0 + delta_us;
        b.amp = 250 + 600 * urand();
        b.tau = 500 + 1000 * urand();
        int first_is_a = urand() < 0.5;
        if (!first_is_a) { double t = a.t0; a.t0 = b.t0; b.t0 = t; }
        sc_event ea = {0}, eb = {0};
        int ga = 0, gb = 0;
        for (double t = 0; t < 300000; t += period) {
            double ta = t, tb = t + 2 * period / zones;   /* zone b sampled half a round later */
            sc_event e;
            if (sc_feed(&za, &cfg, 0, (uint32_t)ta, sense(&a, ta, 120, 2), &e) && !ga) { ea = e; ga = 1; }
            if (sc_feed(&zb, &cfg, 1, (uint32_t)tb, sense(&b, tb, 120, 2), &e) && !gb) { eb = e; gb = 1; }
        }
        if (!ga || !gb) continue;
        errs[ne++] = fabs((double)ea.t_us - a.t0);
        errs[ne++] = fabs((double)eb.t_us - b.t0);
        int said_a_first = (int32_t)(eb.t_us - ea.t_us) > 0;
        correct += said_a_first == (a.t0 < b.t0);
    }
    /* median of the absolute onset errors */
    for (int i = 1; i < ne; i++) for (int j = i; j > 0 && errs[j - 1] > errs[j]; j--) {
        double t = errs[j]; errs[j] = errs[j - 1]; errs[j - 1] = t;
    }
    *median_err = ne ? errs[ne / 2] : -1;
    free(errs);
    return (double)correct / trials;
}

int main(void) {
    test_protocol();
    test_thresholds_hysteresis_mask_drift();
    /* 70 us: the firmware's rate on an AVR (ADC clock /16, 4 zones, ~14 kHz a zone);
     * 400 us: the 2.5 kHz floor the pad must at least reach. */
    double periods[] = {70, 400};
    double d[] = {400, 200, 100, 50, 20};
    for (int p = 0; p < 2; p++) {
        double med = 0;
        for (int i = 0; i < 5; i++) {
            double acc = order_accuracy(d[i], periods[p], 1000, &med);
            printf("FIGURE order_%dus_at_%dus %.3f\n", (int)d[i], (int)periods[p], acc);
            if (p == 0 && d[i] >= 100)
                CHECK(acc >= 0.99, "onsets %d us apart ordered right %.1f%%", (int)d[i], acc * 100);
        }
        printf("FIGURE median_onset_error_us_at_%dus %.1f\n", (int)periods[p], med);
    }
    if (failures) printf("%d FAILED\n", failures);
    else printf("all passed\n");
    return failures != 0;
}
