package index

import (
	"bytes"
	"context"
	"encoding/binary"
	"os"
	"path/filepath"
	"testing"
)

// unseal rewrites the cache file cf without its seal, as a table made
// elsewhere (published, or copied in) comes.
func unseal(t testing.TB, cf string) {
	t.Helper()
	b, err := os.ReadFile(cf)
	if err != nil {
		t.Fatal(err)
	}
	if n := len(b); n >= cacheTrailer && b[n-1] == sealSize {
		// body | crc | seal | blob | blob length | seal length
		blob := int(binary.LittleEndian.Uint64(b[n-cacheTrailer:]))
		at := n - cacheTrailer - blob
		b = append(append(b[:at-sealSize:at-sealSize], b[at:n-1]...), 0)
	}
	if err := os.WriteFile(cf, b, 0o600); err != nil {
		t.Fatal(err)
	}
}

// sealed reports whether the cache file cf carries a seal.
func sealed(t testing.TB, cf string) bool {
	t.Helper()
	b, err := os.ReadFile(cf)
	if err != nil {
		t.Fatal(err)
	}
	return len(b) > 0 && b[len(b)-1] == sealSize
}

// TestCacheSealVouches: a compressed TFRecord table this user's recfs
// saved is sealed under a private key of the cache directory and used
// without a proof; the same table unsealed (as published or copied in), or
// sealed under another directory's key, is proven by a pass over the file,
// after which it is saved again, sealed; a seal that does not match is
// refused as a seal, not as a table.
func TestCacheSealVouches(t *testing.T) {
	t.Parallel()
	ctx := context.Background()
	f := gzipFixture()
	path := filepath.Join(t.TempDir(), "shard.tfrecord.gz")
	if err := os.WriteFile(path, f.z, 0o644); err != nil {
		t.Fatal(err)
	}
	cache, other := t.TempDir(), t.TempDir()
	open := func(dir string) *Table {
		t.Helper()
		tb, err := Open(ctx, path, Options{CacheDir: dir})
		if err != nil {
			t.Fatal(err)
		}
		t.Cleanup(func() { tb.Close() })
		return tb
	}
	open(cache)
	open(other)
	cf := cacheFileOf(t, cache, path)
	if !sealed(t, cf) {
		t.Fatal("the saved table is not sealed")
	}
	st, err := os.Stat(filepath.Join(cache, keyFile))
	if err != nil || st.Mode().Perm() != 0o600 || st.Size() != keySize {
		t.Fatalf("key file: %v, %v", st, err)
	}
	if tb := open(cache); tb.Info().Loaded != "cached" || tb.s().proof != nil {
		t.Fatalf("sealed table: %s, proof %v; want cached and vouched", tb.Info().Loaded, tb.s().proof)
	}
	for _, c := range []struct {
		name  string
		plant func()
	}{
		{"unsealed", func() { unseal(t, cf) }},
		{"sealed by another key", func() {
			b, err := os.ReadFile(cacheFileOf(t, other, path))
			if err != nil {
				t.Fatal(err)
			}
			writePlanted(t, cf, b)
		}},
	} {
		c.plant()
		tb := open(cache)
		p := tb.s().proof
		if tb.Info().Loaded != "cached" || p == nil {
			t.Fatalf("%s: %s table, proof %v; want cached and to be proven", c.name, tb.Info().Loaded, p)
		}
		last := tb.Len() - 1
		if got := readRecord(t, tb, last); !bytes.Equal(got, f.recs[last]) {
			t.Fatalf("%s: last record wrong", c.name)
		}
		if !sealed(t, cf) {
			t.Fatalf("%s: not sealed again after its proof", c.name)
		}
		if tb := open(cache); tb.s().proof != nil {
			t.Fatalf("%s: resealed table still to be proven", c.name)
		}
	}
}

// FuzzLoadCache loads arbitrary bytes as a cache file in a directory
// with a sealing key: it never panics, and nothing it loads is vouched
// for unless the key sealed it (seeds: a sealed table, the same unsealed,
// and cut).
func FuzzLoadCache(f *testing.F) {
	fx := seekFixture()
	src := &countedSource{data: fx.z, key: "mem://fuzz.tfrecord.gz"}
	tb, err := OpenSource(context.Background(), src, Options{CacheDir: "-"})
	if err != nil {
		f.Fatal(err)
	}
	s := tb.s()
	s.id = sourceIdent(src.Identity(), src.Size())
	var sealedB bytes.Buffer
	if err := encodeCacheTo(&sealedB, s, Options{}, 1<<40, bytes.Repeat([]byte{7}, keySize)); err != nil {
		f.Fatal(err)
	}
	plain := encodeCache(s, Options{})
	f.Add(sealedB.Bytes())
	f.Add(plain)
	f.Add(plain[:len(plain)/2])
	f.Fuzz(func(t *testing.T, b []byte) {
		dir := t.TempDir()
		if err := os.WriteFile(filepath.Join(dir, keyFile), bytes.Repeat([]byte{9}, keySize), 0o600); err != nil {
			t.Fatal(err)
		}
		file := filepath.Join(dir, "f.idx")
		if err := os.WriteFile(file, b, 0o600); err != nil {
			t.Fatal(err)
		}
		ls, err := loadCache(context.Background(), file, s.id, Options{})
		if err != nil {
			return
		}
		if v, ok := ls.tab.(voucher); ok && v.vouched() {
			t.Fatal("a table no key of this directory sealed is vouched for")
		}
	})
}
