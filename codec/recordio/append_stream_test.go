package recordio

import (
	"bytes"
	"errors"
	"math/rand"
	"os"
	"path/filepath"
	"slices"
	"testing"

	"github.com/recfs/recfs/codec"
)

// TestRecordIOAppendFrom: items appended from streams read back, with and
// without transformers and trailers; a short input leaves the file
// byte-identical.
func TestRecordIOAppendFrom(t *testing.T) {
	rng := rand.New(rand.NewSource(9))
	cases := append(slices.Clone(appendCases),
		appendCase{name: "flate", wo: WriterOptions{Transformers: []string{"flate"}}},
		appendCase{name: "zstd-flate-trailer", wo: WriterOptions{Transformers: []string{"zstd", "flate"}, Trailer: true}, trailer: []byte("t")})
	for _, c := range cases {
		t.Run(c.name, func(t *testing.T) {
			base := genItems(rng, 3)
			path := filepath.Join(t.TempDir(), "f.rio")
			if err := os.WriteFile(path, makeRio(t, base, c.wo, c.trailer), 0o644); err != nil {
				t.Fatal(err)
			}
			want := slices.Clone(base)
			var batch []ItemSource
			for _, n := range []int{0, 1, rioMaxChunkPayload - 2, rioMaxChunkPayload - 1, 200000} {
				it := make([]byte, n)
				rng.Read(it[:n/2]) // half random, half zeros
				want = append(want, it)
				batch = append(batch, ItemSource{R: bytes.NewReader(it), Size: int64(n)})
			}
			a, err := OpenAppender(path, AppendOptions{})
			if err != nil {
				t.Fatal(err)
			}
			if err := a.AppendFrom(batch...); err != nil {
				t.Fatal(err)
			}
			a.Close()
			before, _ := os.ReadFile(path)
			got, tr := rioScanAll(t, before)
			if !equalItems(got, want) {
				t.Fatalf("%d items read back, want %d (or bytes differ)", len(got), len(want))
			}
			if !bytes.Equal(tr, c.trailer) {
				t.Fatalf("trailer %q, want %q", tr, c.trailer)
			}
			// An input that ends early: nothing changes.
			a, err = OpenAppender(path, AppendOptions{})
			if err != nil {
				t.Fatal(err)
			}
			err = a.AppendFrom(ItemSource{R: bytes.NewReader([]byte("ok")), Size: 2},
				ItemSource{R: bytes.NewReader(make([]byte, 70000)), Size: 70001})
			a.Close()
			if !errors.Is(err, codec.ErrShortInput) {
				t.Fatalf("short input: %v", err)
			}
			after, _ := os.ReadFile(path)
			if !bytes.Equal(before, after) {
				t.Fatalf("file changed by a failed append (%d -> %d bytes)", len(before), len(after))
			}
			if _, err := os.Stat(path + JournalSuffix); err == nil {
				t.Fatal("journal left behind")
			}
		})
	}
}

// TestRecordIOAppendFromTooBig: an item whose compressed block would decode
// past what readers accept is refused before anything is read or written.
func TestRecordIOAppendFromTooBig(t *testing.T) {
	path := filepath.Join(t.TempDir(), "z.rio")
	if err := os.WriteFile(path, makeRio(t, nil, WriterOptions{Transformers: []string{"zstd"}}, nil), 0o644); err != nil {
		t.Fatal(err)
	}
	before, _ := os.ReadFile(path)
	a, err := OpenAppender(path, AppendOptions{})
	if err != nil {
		t.Fatal(err)
	}
	defer a.Close()
	never := readerFunc(func([]byte) (int, error) { t.Fatal("input read"); return 0, nil })
	if err := a.AppendFrom(ItemSource{R: never, Size: DefaultMaxBlockSize}); !errors.Is(err, codec.ErrLimit) {
		t.Fatalf("AppendFrom of %d bytes into a zstd file: %v, want ErrLimit", DefaultMaxBlockSize, err)
	}
	if after, _ := os.ReadFile(path); !bytes.Equal(before, after) {
		t.Fatal("file changed")
	}
}

// readerFunc adapts a function to io.Reader.
type readerFunc func([]byte) (int, error)

func (f readerFunc) Read(p []byte) (int, error) { return f(p) }
