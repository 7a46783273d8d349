package index

import (
	"context"
	"encoding/binary"
	"hash/crc32"
	"os"
	"path/filepath"
	"testing"

	"github.com/recfs/recfs/codec"
)

// recycledFull builds a FULL recyclable chunk of log num by hand.
func recycledFull(num uint32, p []byte) []byte {
	b := make([]byte, 11, 11+len(p))
	b[6] = 5
	binary.LittleEndian.PutUint32(b[7:], num)
	b = append(b, p...)
	c := crc32.Checksum(b[6:], crc32.MakeTable(crc32.Castagnoli))
	binary.LittleEndian.PutUint32(b, (c>>15|c<<17)+0xa282ead8)
	binary.LittleEndian.PutUint16(b[4:], uint16(len(p)))
	return b
}

// TestStaleTailSurvivesCache builds the index of a recycled WAL (log 7
// written over an older log 6) and checks that its stale tail keeps its
// kind through a saved and reloaded table.
func TestStaleTailSurvivesCache(t *testing.T) {
	var file []byte
	for i := 0; len(file) < 2*blockSize; i++ {
		c := recycledFull(6, records(1, 2000, byte(i))[0])
		if room := blockSize - len(file)%blockSize; room < len(c) {
			file = append(file, make([]byte, room)...)
		}
		file = append(file, c...)
	}
	copy(file, recycledFull(7, []byte("live record")))
	p := filepath.Join(t.TempDir(), "000007.log")
	if err := os.WriteFile(p, file, 0o644); err != nil {
		t.Fatal(err)
	}
	cache := t.TempDir()
	for _, want := range []string{"built", "cached"} {
		tb, err := Open(context.Background(), p, Options{CacheDir: cache})
		if err != nil {
			t.Fatal(err)
		}
		ds := tb.Damage()
		if tb.Info().Source != want || tb.Len() != 1 || len(ds) != 1 || !ds[0].Stale() || ds[0].Err != codec.ErrStale ||
			ds[0].Off != 22 || ds[0].Off+ds[0].Len != int64(len(file)) {
			t.Errorf("%s: source %s, %d records, damage %v", want, tb.Info().Source, tb.Len(), ds)
		}
		tb.Close()
	}
}
