package index

import (
	"bytes"
	"errors"
	"math/rand"
	"os"
	"path/filepath"
	"strings"
	"testing"

	"github.com/recfs/recfs/codec"
	"github.com/recfs/recfs/codec/codectest"
	"github.com/recfs/recfs/codec/codectest/recfile"
)

func TestDetectVectors(t *testing.T) {
	cases := []struct {
		glob string
		want func(name string) codec.Format
	}{
		{"leveldb/*.log", func(string) codec.Format { return codec.LevelDB }},
		{"grailbio/*.rio", func(string) codec.Format { return codec.RecordIO }},
		{"grailbio/*.grail-*", func(string) codec.Format { return codec.RecordIOLegacy }},
	}
	total := 0
	for _, c := range cases {
		paths := recfile.Vectors(t, c.glob)
		if len(paths) == 0 {
			t.Fatalf("no vectors match %s", c.glob)
		}
		for _, p := range paths {
			if strings.HasSuffix(p, ".json") {
				continue
			}
			data, err := os.ReadFile(p)
			if err != nil {
				t.Fatal(err)
			}
			total++
			got, err := Detect(bytes.NewReader(data), int64(len(data)))
			if err != nil || got != c.want(p) {
				t.Errorf("%s: Detect = %v, %v; want %v", filepath.Base(p), got, err, c.want(p))
			}
		}
	}
	if total < 25 {
		t.Errorf("only %d vectors", total)
	}
}

func TestDetectRejects(t *testing.T) {
	rng := rand.New(rand.NewSource(9))
	random := make([]byte, 100000)
	rng.Read(random)
	// A v2 body chunk without a header (a headerless append tail).
	tail := codectest.RIOChunk(codectest.RIOBodyMagic, 3, 1, 0, []byte{1, 1, 'x'})
	cases := []struct {
		name  string
		data  []byte
		words []string // what the message must name
	}{
		{"empty", nil, []string{"empty"}},
		{"one byte", []byte{0xd9}, []string{"leveldb", "recordio"}},
		{"seven header-magic bytes", codectest.RIOHeaderMagic[:7], []string{"leveldb", "recordio", "legacy"}},
		{"random", random, []string{"leveldb", "recordio", "legacy"}},
		{"zeros", make([]byte, 70000), []string{"leveldb", "recordio"}},
		{"text", []byte(strings.Repeat("hello world\n", 100)), []string{"leveldb", "recordio"}},
		{"headerless body chunk", tail, []string{"header"}},
		{"legacy magic, bad crc", append(append([]byte{}, codectest.RIOUnpackedMagic[:]...), make([]byte, 20)...), []string{"recordio"}},
	}
	for _, c := range cases {
		f, err := Detect(bytes.NewReader(c.data), int64(len(c.data)))
		if err == nil || !errors.Is(err, codec.ErrFormat) || f != codec.Unknown {
			t.Errorf("%s: Detect = %v, %v; want codec.ErrFormat", c.name, f, err)
			continue
		}
		for _, w := range c.words {
			if !strings.Contains(err.Error(), w) {
				t.Errorf("%s: error %q does not mention %q", c.name, err, w)
			}
		}
	}
}
