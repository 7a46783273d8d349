package index

import (
	"bytes"
	"context"
	"errors"
	"path/filepath"
	"testing"

	"github.com/recfs/recfs/codec"
	"github.com/recfs/recfs/codec/codectest/recfile"
	"github.com/recfs/recfs/codec/leveldb"
)

func TestLogNumber(t *testing.T) {
	for _, c := range []struct {
		name string
		want uint32
	}{
		{"000007.log", 7},
		{"dir/000123.log", 123},
		{"bucket/prefix/4294967303.log", 7}, // low 32 bits
		{"00000000000000001000.log", 0},     // a Kafka segment: an offset
		{"wal.log", 0},
		{"000007.log.bak", 0},
		{".log", 0},
		{"000007", 0},
		{"000007-001.log", 7}, // a pebble WAL failover segment
		{"000007-.log", 0},
		{"000007-x.log", 0},
		{"-001.log", 0},
		{"https://host/wal/000009.log?X-Amz-Signature=1", 9},
		{"https://host/wal/000009.log#frag", 9},
		{"dir/wal?.log", 0},
	} {
		if got := InferOptions(c.name, Options{}).LogNum; got != c.want {
			t.Errorf("%q: LogNum %d, want %d", c.name, got, c.want)
		}
	}
}

// TestOpenRecycledWALByName opens a recycled pebble WAL whose live log is
// one write torn inside its first chunk's header, so that its bytes alone
// say the old log's number: named as pebble names it, the file shows the
// live log (its torn write) and the previous life as a stale tail; under another
// name, the old records.
func TestOpenRecycledWALByName(t *testing.T) {
	write := func(num uint32, recs ...[]byte) []byte {
		var b bytes.Buffer
		w := leveldb.NewWriter(&b, leveldb.WriterOptions{Recyclable: true, LogNum: num})
		for _, r := range recs {
			if _, err := w.WriteRecord(r); err != nil {
				t.Fatal(err)
			}
		}
		if err := w.Flush(); err != nil {
			t.Fatal(err)
		}
		return b.Bytes()
	}
	var old [][]byte
	for i := range 12 {
		old = append(old, bytes.Repeat([]byte{byte('a' + i)}, 9000))
	}
	file := write(5, old...)
	copy(file, write(7, []byte("live"))[:3])
	for _, c := range []struct {
		name  string
		stale bool // the torn first write and a stale tail; else old records after damage in block 0
	}{{"000007.log", true}, {"wal.bin", false}} {
		path := filepath.Join(t.TempDir(), c.name)
		recfile.WriteFile(t, path, file)
		tb, err := Open(context.Background(), path, Options{CacheDir: "-"})
		if err != nil {
			t.Fatal(err)
		}
		defer tb.Close()
		ds := tb.Damage()
		stale := len(ds) == 2 && ds[0].Off == 0 && errors.Is(ds[0].Err, codec.ErrTruncated) &&
			ds[1].Stale() && ds[1].Off+ds[1].Len == int64(len(file))
		if stale != c.stale || (tb.Len() == 0) != c.stale {
			t.Errorf("%s: %d records, damage %v", c.name, tb.Len(), ds)
		}
	}
}

// TestRenamedWALFlavor: a recyclable log 7 copied under a near number's
// name (000009.log) reads as the database's tools read it, empty, every
// chunk stale; its flavour says the number is the name's. Under its own
// name, or one far from its number (a date), it is log 7 with its records.
func TestRenamedWALFlavor(t *testing.T) {
	t.Parallel()
	var b bytes.Buffer
	w := leveldb.NewWriter(&b, leveldb.WriterOptions{Recyclable: true, LogNum: 7})
	for _, r := range []string{"one", "two", "three"} {
		if _, err := w.WriteRecord([]byte(r)); err != nil {
			t.Fatal(err)
		}
	}
	if err := w.Flush(); err != nil {
		t.Fatal(err)
	}
	for _, c := range []struct {
		name    string
		n       int64
		flavour string
	}{
		{"000007.log", 3, "RocksDB/pebble WAL (recyclable chunks, log 7)"},
		{"20261127.log", 3, "RocksDB/pebble WAL (recyclable chunks, log 7)"},
		{"000009.log", 0, "RocksDB/pebble WAL (recyclable chunks, log 9 by the file's name, every chunk an older log's: renamed or copied?)"},
	} {
		path := filepath.Join(t.TempDir(), c.name)
		recfile.WriteFile(t, path, b.Bytes())
		tb, err := Open(context.Background(), path, Options{CacheDir: "-"})
		if err != nil {
			t.Fatal(err)
		}
		if tb.Len() != c.n || tb.Info().Flavor != c.flavour {
			t.Errorf("%s: %d records, flavour %q; want %d, %q", c.name, tb.Len(), tb.Info().Flavor, c.n, c.flavour)
		}
		tb.Close()
	}
}
