package s3

import (
	"bytes"
	"context"
	"errors"
	"io"
	"math/rand/v2"
	"os"
	"path/filepath"
	"strings"
	"testing"

	"github.com/recfs/recfs/index"
	"github.com/recfs/recfs/source"
	"github.com/recfs/recfs/source/s3"
	"github.com/recfs/recfs/test/internal/vgw"
)

const vectors = "../../../shared/vectors"

// vectorFiles lists the reference vectors (record files, not their .json).
func vectorFiles(t *testing.T) []string {
	t.Helper()
	var out []string
	for _, d := range []string{"leveldb", "grailbio"} {
		ents, err := os.ReadDir(filepath.Join(vectors, d))
		if err != nil {
			t.Fatal(err)
		}
		for _, e := range ents {
			if !strings.HasSuffix(e.Name(), ".json") {
				out = append(out, filepath.Join(d, e.Name()))
			}
		}
	}
	return out
}

// Every vector read through source/s3 in reads of random sizes and places is the
// local file byte for byte, and its table built over the object has the
// local table's records.
func TestVectorsOverS3(t *testing.T) {
	srv := vgw.Start(t)
	ctx := context.Background()
	rng := rand.New(rand.NewPCG(1, 2))
	for _, name := range vectorFiles(t) {
		t.Run(name, func(t *testing.T) {
			local, err := os.ReadFile(filepath.Join(vectors, name))
			if err != nil {
				t.Fatal(err)
			}
			srv.Put(t, name, local)
			obj, err := srv.Client.Open(ctx, vgw.Bucket, name)
			if err != nil {
				t.Fatal(err)
			}
			defer obj.Close()
			if obj.Size() != int64(len(local)) {
				t.Fatalf("size %d, local %d", obj.Size(), len(local))
			}
			got := make([]byte, len(local))
			for off := 0; off < len(local); {
				n := min(1+rng.IntN(200<<10), len(local)-off)
				k, err := obj.ReadAt(got[off:off+n], int64(off))
				if k != n || (err != nil && !(errors.Is(err, io.EOF) && off+n == len(local))) {
					t.Fatalf("ReadAt(%d, %d) = %d, %v", n, off, k, err)
				}
				off += n
			}
			if !bytes.Equal(got, local) {
				t.Fatal("object bytes differ from the local file")
			}
			o := index.Options{CacheDir: t.TempDir()}
			if strings.HasSuffix(name, ".grail-rpk-gz") {
				o.LegacyTransform = "flate"
			}
			want, err := index.Open(ctx, filepath.Join(vectors, name), index.Options{CacheDir: "-", LegacyTransform: o.LegacyTransform})
			if err != nil {
				t.Fatal(err)
			}
			defer want.Close()
			for i, src := range []string{"built", "cached"} {
				tb, err := index.OpenSource(ctx, obj, o)
				if err != nil {
					t.Fatal(err)
				}
				if tb.Info().Loaded != src || tb.Len() != want.Len() {
					t.Fatalf("open %d: %s with %d records, want %s with %d", i, tb.Info().Loaded, tb.Len(), src, want.Len())
				}
				for n := range want.Len() {
					a, b := readRecord(t, want, n), readRecord(t, tb, n)
					if !bytes.Equal(a, b) {
						t.Fatalf("record %d differs", n)
					}
				}
			}
		})
	}
}

func readRecord(t *testing.T, tb *index.Table, n int64) []byte {
	t.Helper()
	p := make([]byte, tb.Size(n))
	if k, err := tb.ReadAt(n, p, 0); k != len(p) || (err != nil && !errors.Is(err, io.EOF)) {
		t.Fatalf("record %d: %d, %v", n, k, err)
	}
	return p
}

// An object overwritten while a reader has it open fails that reader's later
// reads with ErrChanged (versitygw answers the pinned GET with 412) — also
// for blocks it had cached — and a reopen reads the new version.
func TestOverwriteWhileReading(t *testing.T) {
	srv := vgw.Start(t)
	ctx := context.Background()
	oldData := bytes.Repeat([]byte("old version "), 300000) // 3.6 MB: several blocks
	newData := bytes.Repeat([]byte("NEW VERSION "), 300000)
	srv.Put(t, "k.log", oldData)
	obj, err := srv.Client.Open(ctx, vgw.Bucket, "k.log")
	if err != nil {
		t.Fatal(err)
	}
	defer obj.Close()
	buf := make([]byte, 1000)
	if _, err := obj.ReadAt(buf, 10); err != nil || !bytes.Equal(buf, oldData[10:1010]) {
		t.Fatalf("first read: %v", err)
	}
	srv.Put(t, "k.log", newData)
	for _, off := range []int64{3 << 20, 10} {
		if n, err := obj.ReadAt(buf, off); !errors.Is(err, source.ErrChanged) {
			t.Fatalf("read at %d after overwrite: %d, %v; want ErrChanged", off, n, err)
		}
	}
	if id, _, err := obj.Stat(); err != nil || id == obj.Identity() {
		t.Errorf("Stat after overwrite: %v, %v", id, err)
	}
	obj2, err := srv.Client.Open(ctx, vgw.Bucket, "k.log")
	if err != nil {
		t.Fatal(err)
	}
	defer obj2.Close()
	if _, err := obj2.ReadAt(buf, 3<<20); err != nil || !bytes.Equal(buf, newData[3<<20:3<<20+1000]) {
		t.Errorf("reopened read: %v", err)
	}
	if s := obj2.Stats(); s.Heads != 1 || s.Gets != 1 {
		t.Errorf("reopened object made %+v requests, want 1 HEAD + 1 GET", s)
	}
}

// The FS lists a prefix of the real server.
func TestFSOverS3(t *testing.T) {
	srv := vgw.Start(t)
	srv.Put(t, "logs/a.log", []byte("a"))
	srv.Put(t, "logs/sub/b.log", []byte("bb"))
	fsys := srv.Client.FS(context.Background(), vgw.Bucket, "logs/")
	ents, err := fsys.ReadDir(".")
	if err != nil {
		t.Fatal(err)
	}
	var names []string
	for _, e := range ents {
		names = append(names, e.Name())
	}
	if strings.Join(names, ",") != "a.log,sub" {
		t.Errorf("listing %v", names)
	}
	f, err := fsys.Open("sub/b.log")
	if err != nil {
		t.Fatal(err)
	}
	defer f.Close()
	if f.(*s3.File).Size() != 2 {
		t.Errorf("size %d", f.(*s3.File).Size())
	}
}
