package interop

// Record generators: the vectors' payload rule and randomized size mixes that
// aim at the layout corner cases of each format.

import (
	"flag"
	"math/rand"
	"os"
	"strconv"
	"testing"
	"time"

	"github.com/recfs/recfs/codec/codectest"
)

const (
	logBlock      = 32768
	logHeader     = 7
	rioChunk      = 32768
	rioChunkHdr   = 28
	rioMaxPayload = rioChunk - rioChunkHdr // 32740
)

var seedFlag = flag.Int64("interop.seed", 0, "base seed for the randomized interop tests (0 = from the clock)")

// testSeeds returns n seeds for a randomized test and logs them, so a
// failure can be replayed with -interop.seed (or RECFS_INTEROP_SEED).
func testSeeds(t testing.TB, n int) []int64 {
	t.Helper()
	base := *seedFlag
	if s := os.Getenv("RECFS_INTEROP_SEED"); base == 0 && s != "" {
		v, err := strconv.ParseInt(s, 10, 64)
		if err != nil {
			t.Fatalf("RECFS_INTEROP_SEED: %v", err)
		}
		base = v
	}
	if base == 0 {
		base = time.Now().UnixNano()
	}
	seeds := make([]int64, n)
	for i := range seeds {
		seeds[i] = base + int64(i)
	}
	t.Logf("seeds %v (replay with -interop.seed=%d)", seeds, base)
	return seeds
}

// payload returns record i of length n under the vectors' payload rule.
func payload(i, n int) []byte { return codectest.VectorPayload(i, n) }

// randPayload returns n bytes from rng (fast; for big records).
func randPayload(rng *rand.Rand, n int) []byte {
	p := make([]byte, n)
	rng.Read(p)
	return p
}

// legacyEnd returns the file position after a legacy (7-byte header) leveldb
// writer adds a record of n bytes at position pos (spec section 4).
func legacyEnd(pos int64, n int) int64 {
	left := n
	for first := true; first || left > 0; first = false {
		room := logBlock - pos%logBlock
		if room < logHeader {
			pos += room
			room = logBlock
		}
		k := min(int64(left), room-logHeader)
		pos += logHeader + k
		left -= int(k)
	}
	return pos
}

// sizeForEnd finds a record length in [lo, hi] that, written at pos, ends
// exactly at end; ok is false if none does. legacyEnd is monotone in n.
func sizeForEnd(pos, end int64, lo, hi int) (int, bool) {
	for lo < hi {
		mid := lo + (hi-lo)/2
		if legacyEnd(pos, mid) < end {
			lo = mid + 1
		} else {
			hi = mid
		}
	}
	return lo, legacyEnd(pos, lo) == end
}

// leveldbSizeMix returns the lengths of a randomized record sequence for a
// legacy leveldb log of about total bytes. It always includes records of 0
// and 1 bytes, records that leave exactly 7, 6 and 1..5 bytes in their
// block, records that end exactly on a block boundary and one byte either
// side of it, split records of several blocks and, when bigOK, one
// multi-MiB record.
func leveldbSizeMix(rng *rand.Rand, total int64, bigOK bool) []int {
	var sizes []int
	var pos int64
	add := func(n int) {
		sizes = append(sizes, n)
		pos = legacyEnd(pos, n)
	}
	// aim makes the next record end leaving `left` bytes in some block
	// `blocks` blocks ahead.
	aim := func(left int64, blocks int64) {
		blockEnd := (pos/logBlock + 1 + blocks) * logBlock
		if n, ok := sizeForEnd(pos, blockEnd-left, 0, int(blockEnd-pos)); ok {
			add(n)
			return
		}
		add(rng.Intn(100))
	}
	add(0)
	add(1)
	big := bigOK
	// Bytes left in the block after an aimed record: 7 (then an empty or a
	// non-empty record), 6, 0 (exact boundary), 1 (boundary − 1), 2..5.
	corner := []int64{7, 6, 0, 1, 7, 6, 0, 2, 3, 4, 5}
	turn := rng.Intn(len(corner))
	for pos < total || len(sizes) < 12 {
		switch c := rng.Intn(40); c {
		case 0:
			add(0)
		case 1:
			add(1)
		case 2, 3:
			add(2 + rng.Intn(200))
		case 4:
			if rng.Intn(3) == 0 {
				add(200 + rng.Intn(40000))
			} else {
				add(200 + rng.Intn(2000))
			}
		case 5, 6, 7, 8, 9:
			// Corner cases take turns: each block end can show only one.
			left := corner[turn%len(corner)]
			turn++
			aim(left, int64(rng.Intn(2)))
			if left == 7 {
				if turn%2 == 0 {
					add(0) // an empty record fills the 7 bytes with a FULL
				} else {
					add(1 + rng.Intn(5000)) // a zero-length FIRST
				}
			}
		case 10:
			// boundary + 1: one payload byte spills into the next block.
			room := logBlock - pos%logBlock
			if room < logHeader {
				add(3)
			} else {
				add(int(room-logHeader) + 1)
			}
		case 11:
			add(logBlock - logHeader + rng.Intn(3) - 1) // a whole-block payload ±1
		case 12:
			if rng.Intn(3) == 0 {
				add(32761*(2+rng.Intn(3)) + rng.Intn(3) - 1)
			} else {
				add(rng.Intn(3000))
			}
		case 13:
			if big {
				big = false
				add(1<<20 + rng.Intn(2<<20)) // 1..3 MiB
			} else if rng.Intn(3) == 0 {
				add(rng.Intn(70000))
			} else {
				add(rng.Intn(100))
			}
		default:
			add(rng.Intn(1000))
		}
	}
	return sizes
}

// rioSizeMix returns n item lengths around recordio's chunk payload
// (32740), the single-item block boundaries (32736 = 32740−1−3, and
// multiples of the chunk payload) and small items, including 0.
func rioSizeMix(rng *rand.Rand, n int) []int {
	sizes := make([]int, n)
	for i := range sizes {
		switch rng.Intn(8) {
		case 0:
			sizes[i] = 0
		case 1:
			sizes[i] = rng.Intn(16)
		case 2:
			sizes[i] = rioMaxPayload + rng.Intn(9) - 4
		case 3:
			sizes[i] = rioMaxPayload - 4 + rng.Intn(5) - 2 // 1-byte count + 3-byte size
		case 4:
			sizes[i] = (2+rng.Intn(3))*rioMaxPayload + rng.Intn(7) - 3
		case 5:
			sizes[i] = rng.Intn(5000)
		default:
			sizes[i] = rng.Intn(70000)
		}
	}
	return sizes
}

// makeRecords builds records of the given lengths: the vectors' payload rule
// for small ones (so the bytes are reproducible), rng bytes for big ones.
func makeRecords(rng *rand.Rand, sizes []int) [][]byte {
	recs := make([][]byte, len(sizes))
	for i, n := range sizes {
		if n > 1<<16 {
			recs[i] = randPayload(rng, n)
		} else {
			recs[i] = payload(i, n)
		}
	}
	return recs
}

func TestLegacyEndMatchesGoleveldb(t *testing.T) {
	// The layout model that aims the size mixes must agree with a real
	// writer, or the corner cases would not be hit.
	for _, seed := range testSeeds(t, 3) {
		rng := rand.New(rand.NewSource(seed))
		sizes := leveldbSizeMix(rng, 1_000_000, false)
		recs := makeRecords(rng, sizes)
		b := mustGoleveldb(t, recs)
		var pos int64
		hits := map[int64]int{}
		for _, n := range sizes {
			pos = legacyEnd(pos, n)
			if pos%logBlock == 0 || logBlock-pos%logBlock <= 7 {
				hits[logBlock-pos%logBlock]++
			}
		}
		if pos != int64(len(b)) {
			t.Fatalf("seed %d: model says %d bytes, goleveldb wrote %d", seed, pos, len(b))
		}
		for _, left := range []int64{7, 6, logBlock} {
			if hits[left] == 0 {
				t.Errorf("seed %d: no record left %d bytes in its block (hits %v)", seed, left%logBlock, hits)
			}
		}
	}
}
