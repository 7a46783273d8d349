package tfrecord

import (
	"bytes"
	"encoding/binary"
	"math/rand/v2"
	"os"
	"testing"
)

// TestSyncFalsePositiveRate measures how often a 12-byte window of random
// data passes the length-checksum check, the resync rule's first test. In
// theory the stored 4 bytes are independent of the CRC of the 8 before
// them, so the rate is 2^-32 (2.3e-10). The test checks the theory where it
// can be measured: the rate at which the low 16 bits match (expected
// 2^-16) and the full-match count over n windows, then reports the
// full-match rate with its 95% upper bound. RECFS_SOAK=1 measures 2^32
// windows (several minutes) instead of 2^25.
func TestSyncFalsePositiveRate(t *testing.T) {
	t.Parallel()
	n := uint64(1) << 25
	if os.Getenv("RECFS_SOAK") != "" {
		n = 1 << 32
	}
	rng := rand.New(rand.NewPCG(7, 8))
	var w [12]byte
	var full, half uint64
	for i := uint64(0); i < n; i++ {
		binary.LittleEndian.PutUint64(w[:8], rng.Uint64())
		stored := rng.Uint32()
		got := maskCRC(crc32c(w[:8]))
		if got&0xffff == stored&0xffff {
			half++
			if got == stored {
				full++
			}
		}
	}
	halfRate := float64(half) / float64(n)
	// rule of three / Poisson: 95% upper bound on the full-match rate
	upper := (float64(full) + 3) / float64(n)
	t.Logf("windows %d: 16-bit matches %d (rate %.3g, theory %.3g); full matches %d (rate %.3g, 95%% upper bound %.3g, theory %.3g)",
		n, half, halfRate, 1.0/65536, full, float64(full)/float64(n), upper, 1.0/(1<<32))
	if halfRate < 0.8/65536 || halfRate > 1.2/65536 {
		t.Errorf("16-bit match rate %.3g is far from 2^-16: the checksum is not uniform on random data", halfRate)
	}
	if float64(full) > 10*float64(n)/(1<<32)+3 {
		t.Errorf("%d full matches in %d windows", full, n)
	}
	// The rule's second test, a length that fits in the file, rejects
	// almost every random window on its own: a random uint64 is below
	// 2^40 (1 TiB) with probability 2^-24.
}

// TestSyncNoFalseRecordsInRandomData runs the scanner's resync over random
// bytes: with both checksums and the length bound required, it must find
// nothing, and report the whole range as one damage.
func TestSyncNoFalseRecordsInRandomData(t *testing.T) {
	t.Parallel()
	b := make([]byte, 8<<20)
	rng := rand.New(rand.NewPCG(9, 10))
	for i := 0; i+8 <= len(b); i += 8 {
		binary.LittleEndian.PutUint64(b[i:], rng.Uint64())
	}
	s := NewScanner(bytes.NewReader(b), int64(len(b)), Options{})
	for s.Next() {
		t.Fatalf("record %+v in random data", s.Record())
	}
	if d := s.Damage(); len(d) != 1 || d[0].Off != 0 || d[0].Len != int64(len(b)) {
		t.Fatalf("damage %v", d)
	}
}

// TestSplitSyncInsideNestedFile shows why a parallel build must check the
// hand-over between parts instead of trusting the resync rule: when the
// records are themselves TFRecord files (a legitimate payload), a part
// starting inside one syncs on the inner records, which pass every check.
// The part before it then hands over at a different offset, which is how
// the mismatch is caught.
func TestSplitSyncInsideNestedFile(t *testing.T) {
	t.Parallel()
	inner, _ := writeAll(t, [][]byte{bytes.Repeat([]byte("i"), 100), bytes.Repeat([]byte("j"), 100), bytes.Repeat([]byte("k"), 100)})
	outer, offs := writeAll(t, [][]byte{inner, inner, inner})
	size := int64(len(outer))
	start := offs[1] + HeaderSize + 50 // inside the second record's first inner record
	a := NewScanner(bytes.NewReader(outer), size, Options{End: start})
	for a.Next() {
	}
	b := NewScanner(bytes.NewReader(outer), size, Options{Start: start})
	for b.Next() {
	}
	if b.Info().First == a.Info().Next {
		t.Fatalf("the part synced at %d, the true boundary; expected a false sync inside the nested file", b.Info().First)
	}
	if a.Info().Next != offs[2] {
		t.Fatalf("the first part hands over at %d, want %d", a.Info().Next, offs[2])
	}
	t.Logf("part synced at %d inside record %d; true hand-over at %d", b.Info().First, 1, a.Info().Next)
}

// BenchmarkSync measures the resync rule's speed over random data (no
// record anywhere): the cost of skipping damage, or of a parallel part's
// start.
func BenchmarkSync(b *testing.B) {
	buf := make([]byte, 16<<20)
	rng := rand.New(rand.NewPCG(11, 12))
	for i := 0; i+8 <= len(buf); i += 8 {
		binary.LittleEndian.PutUint64(buf[i:], rng.Uint64())
	}
	r := bytes.NewReader(buf)
	b.SetBytes(int64(len(buf)))
	for b.Loop() {
		s := NewScanner(r, int64(len(buf)), Options{Start: 1})
		for s.Next() {
		}
	}
}
