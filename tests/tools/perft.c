/* A plain Othello perft in C: the yardstick BENCHMARKS.md sets the exact
 * solver's time beside, so that the solver's figure survives a change of
 * machine. Plain on purpose: bitboards, moves by a shift fill per direction,
 * flips walked square by square, every leaf visited (no bulk count of the
 * last ply). The counts follow shared/data/perft.txt: a pass is one ply, a
 * game that ends early is one leaf.
 *
 *   gcc -O2 -march=x86-64-v3 -o /tmp/perft tests/tools/perft.c
 *   /tmp/perft 11      # 212258800 leaves
 */
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>

typedef uint64_t u64;

static const int STEP[8] = {1, -1, 8, -8, 9, -9, 7, -7};
/* Where a step may land without wrapping round an edge. */
static const u64 LAND[8] = {
    0xFEFEFEFEFEFEFEFEull, 0x7F7F7F7F7F7F7F7Full, ~0ull, ~0ull,
    0xFEFEFEFEFEFEFEFEull, 0x7F7F7F7F7F7F7F7Full,
    0x7F7F7F7F7F7F7F7Full, 0xFEFEFEFEFEFEFEFEull};

static u64 shift(u64 b, int d) {
    u64 s = STEP[d] > 0 ? b << STEP[d] : b >> -STEP[d];
    return s & LAND[d];
}

static u64 moves(u64 p, u64 o) {
    u64 legal = 0, empty = ~(p | o);
    for (int d = 0; d < 8; d++) {
        u64 run = shift(p, d) & o;
        for (int k = 0; k < 5; k++) run |= shift(run, d) & o;
        legal |= shift(run, d) & empty;
    }
    return legal;
}

static u64 flips(int sq, u64 p, u64 o) {
    u64 all = 0;
    for (int d = 0; d < 8; d++) {
        u64 run = 0, b = shift(1ull << sq, d);
        while (b & o) {
            run |= b;
            b = shift(b, d);
        }
        if (b & p) all |= run;
    }
    return all;
}

static u64 perft(u64 p, u64 o, int depth) {
    if (depth == 0) return 1;
    u64 legal = moves(p, o);
    if (!legal) {
        if (!moves(o, p)) return 1;
        return perft(o, p, depth - 1);
    }
    u64 leaves = 0;
    while (legal) {
        int sq = __builtin_ctzll(legal);
        legal &= legal - 1;
        u64 f = flips(sq, p, o);
        leaves += perft(o ^ f, p ^ f ^ (1ull << sq), depth - 1);
    }
    return leaves;
}

int main(int argc, char **argv) {
    int depth = argc > 1 ? atoi(argv[1]) : 11;
    u64 black = 0x0000000810000000ull, white = 0x0000001008000000ull;
    printf("%llu\n", (unsigned long long)perft(black, white, depth));
    return 0;
}
