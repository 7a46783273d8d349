package open

import (
	"bytes"
	"context"
	"errors"
	"fmt"
	iofs "io/fs"
	"os"
	"path/filepath"
	"slices"
	"testing"

	"github.com/recfs/recfs/codec"
	"github.com/recfs/recfs/fs"
	"github.com/recfs/recfs/index"
)

// createCase is a format to create a file in, by name, and the table's
// format it must give.
type createCase struct {
	format  string
	trailer bool
	want    codec.Format
}

// TestCreateOrOpen: a missing file is created in the format named (then
// opened as it is), a bad format name is a usage error that creates
// nothing, and without a format a missing file is an error.
func TestCreateOrOpen(t *testing.T) {
	t.Parallel()
	ctx := context.Background()
	dir := t.TempDir()
	o := Options{Index: index.Options{CacheDir: "-", Writable: true}}
	for _, tc := range []createCase{{"leveldb", false, codec.LevelDB}, {"recordio", true, codec.RecordIO}, {"tfrecord", false, codec.TFRecord}} {
		p := filepath.Join(dir, "new."+tc.format)
		for round := 0; round < 2; round++ { // created, then opened
			tb, err := CreateOrOpen(ctx, p, tc.format, tc.trailer, o)
			if err != nil {
				t.Fatalf("%s round %d: %v", tc.format, round, err)
			}
			if f := tb.Info().Format; f != tc.want || tb.Len() != int64(round) {
				t.Errorf("%s round %d: format %v, %d records; want %v, %d", tc.format, round, f, tb.Len(), tc.want, round)
			}
			if round == 0 {
				if _, err := tb.Append(ctx, [][]byte{[]byte("one")}, index.AppendOptions{Sync: true}); err != nil {
					t.Fatal(err)
				}
			}
			tb.Close()
		}
	}
	bad := filepath.Join(dir, "bad")
	if _, err := CreateOrOpen(ctx, bad, "nosuch", false, o); !IsUsage(err) {
		t.Errorf("bad format: %v, want a usage error", err)
	}
	if _, err := CreateOrOpen(ctx, bad, "", false, o); err == nil || IsUsage(err) {
		t.Errorf("missing file without a format: %v, want an open error", err)
	}
	if _, err := os.Stat(bad); !os.IsNotExist(err) {
		t.Errorf("a failed CreateOrOpen left a file: %v", err)
	}
}

// TestCreateOrOpenEmptyFile: an empty file already there (touch FILE; recfs
// append --create FORMAT FILE) takes the format named, as a new file does:
// it was a leveldb log before, whatever the format named.
func TestCreateOrOpenEmptyFile(t *testing.T) {
	t.Parallel()
	ctx := context.Background()
	dir := t.TempDir()
	o := Options{Index: index.Options{CacheDir: "-", Writable: true}}
	for _, tc := range []createCase{{"leveldb", false, codec.LevelDB}, {"recordio", false, codec.RecordIO}, {"recordio", true, codec.RecordIO}, {"tfrecord", false, codec.TFRecord}} {
		p := filepath.Join(dir, fmt.Sprintf("touched-%s-%v", tc.format, tc.trailer))
		if err := os.WriteFile(p, nil, 0o644); err != nil {
			t.Fatal(err)
		}
		tb, err := CreateOrOpen(ctx, p, tc.format, tc.trailer, o)
		if err != nil {
			t.Fatalf("%s: %v", p, err)
		}
		if _, err := tb.Append(ctx, [][]byte{[]byte("one")}, index.AppendOptions{Sync: true}); err != nil {
			t.Fatal(err)
		}
		tb.Close()
		tb, err = Table(ctx, p, Options{Index: index.Options{CacheDir: "-"}})
		if err != nil {
			t.Fatalf("%s: %v", p, err)
		}
		if f := tb.Info().Format; f != tc.want || tb.Len() != 1 || (tb.Info().Trailer >= 0) != tc.trailer {
			t.Errorf("%s: format %v, %d records, trailer %d; want %v, 1, trailer %v", p, f, tb.Len(), tb.Info().Trailer, tc.want, tc.trailer)
		}
		tb.Close()
	}
}

// TestCreateOrOpenLostRace: one append --create made the file (O_EXCL) and
// holds its lock, empty, for its first append; another asking for another
// format finds it there (as after losing O_EXCL to it) and must be refused
// once the winner's record is in, not append its own in the winner's
// format. One asking for the winner's format appends after it.
func TestCreateOrOpenLostRace(t *testing.T) {
	t.Parallel()
	ctx := context.Background()
	dir := t.TempDir()
	o := Options{Index: index.Options{CacheDir: "-", Writable: true, KeepCreateLock: true}}
	for _, tc := range []struct {
		loser codec.Format
		ok    bool
	}{{codec.LevelDB, false}, {codec.RecordIO, false}, {codec.TFRecord, true}} {
		p := filepath.Join(dir, "race-"+tc.loser.String())
		a, err := CreateOrOpen(ctx, p, "tfrecord", false, o) // the winner, lock held
		if err != nil {
			t.Fatal(err)
		}
		type res struct {
			tb  *index.Table
			err error
		}
		loser := make(chan res, 1)
		go func() {
			tb, err := openExisting(ctx, p, tc.loser, false, o) // the O_EXCL loser's way
			if err == nil {
				_, err = tb.Append(ctx, [][]byte{[]byte("loser")}, index.AppendOptions{Sync: true})
			}
			loser <- res{tb, err}
		}()
		if _, err := a.Append(ctx, [][]byte{[]byte("winner")}, index.AppendOptions{Sync: true}); err != nil {
			t.Fatal(err)
		}
		a.Close()
		r := <-loser
		if r.tb != nil {
			r.tb.Close()
		}
		if tc.ok && r.err != nil || !tc.ok && !IsUsage(r.err) {
			t.Errorf("--create %v after a tfrecord winner: %v", tc.loser, r.err)
		}
		tb, err := Table(ctx, p, Options{Index: index.Options{CacheDir: "-"}})
		if err != nil {
			t.Fatal(err)
		}
		want := int64(1)
		if tc.ok {
			want = 2
		}
		if f := tb.Info().Format; f != codec.TFRecord || tb.Len() != want || len(tb.Damage()) != 0 {
			t.Errorf("--create %v after a tfrecord winner: the file is %v, %d records (want %d), damage %v", tc.loser, f, tb.Len(), want, tb.Damage())
		}
		tb.Close()
	}
}

// TestTreeCreateWrittenMeanwhile: mkdir of NAME.tfrecord in a --rw mount
// created the file, but another writer put records into it before the
// empty record file was written (under the file's lock). Records of
// another format are refused with EEXIST-style fs.ErrExist, the file left
// as the other writer made it; records of the new file's own format are
// its table's. The new file's format is never forced onto them.
func TestTreeCreateWrittenMeanwhile(t *testing.T) {
	t.Parallel()
	ctx := context.Background()
	dir := t.TempDir()
	ix := index.Options{CacheDir: "-", Writable: true}
	other := func(format string) []byte { // two records of format, as another writer left them
		p := filepath.Join(dir, "other-"+format)
		tb, err := CreateOrOpen(ctx, p, format, false, Options{Index: ix})
		if err != nil {
			t.Fatal(err)
		}
		if _, err := tb.Append(ctx, [][]byte{[]byte("one"), []byte("two")}, index.AppendOptions{Sync: true}); err != nil {
			t.Fatal(err)
		}
		tb.Close()
		b, err := os.ReadFile(p)
		if err != nil {
			t.Fatal(err)
		}
		return b
	}
	create := createFunc(TreeOptions{Options: Options{Index: ix}, NewFormat: codec.LevelDB})
	for _, tc := range []struct {
		format string
		ok     bool
	}{{"leveldb", false}, {"recordio", false}, {"tfrecord", true}} {
		data := other(tc.format)
		p := filepath.Join(dir, "new-"+tc.format+".tfrecord")
		if err := os.WriteFile(p, data, 0o644); err != nil {
			t.Fatal(err)
		}
		f, err := os.OpenFile(p, os.O_RDWR, 0)
		if err != nil {
			t.Fatal(err)
		}
		rs, err := create(ctx, fs.SourceFile{File: f, Path: p})
		switch {
		case tc.ok && err != nil:
			t.Errorf("%s written meanwhile: %v", tc.format, err)
		case tc.ok:
			tb := rs.(*index.Table)
			if tb.Format() != codec.TFRecord || tb.Len() != 2 {
				t.Errorf("%s written meanwhile: table %v, %d records", tc.format, tb.Format(), tb.Len())
			}
			tb.Close()
		case !errors.Is(err, iofs.ErrExist):
			if rs != nil {
				tb := rs.(*index.Table)
				t.Errorf("%s written meanwhile: not refused (%v): table %v, %d records", tc.format, err, tb.Format(), tb.Len())
				tb.Close()
			} else {
				t.Errorf("%s written meanwhile: %v, want fs.ErrExist", tc.format, err)
			}
		}
		f.Close()
		if b, err := os.ReadFile(p); err != nil || !bytes.Equal(b, data) {
			t.Errorf("%s written meanwhile: the file changed (%d bytes, was %d): %v", tc.format, len(b), len(data), err)
		}
	}
}

// TestDecodeParams: local paths are made absolute, URLs and empty names
// kept; files are opened as commands open them.
func TestDecodeParams(t *testing.T) {
	t.Parallel()
	wd, err := os.Getwd()
	if err != nil {
		t.Fatal(err)
	}
	p := DecodeParams("db/MANIFEST-000001", []string{"a.proto", "/abs/b.proto", "s3://b/c.proto"}, []string{"inc"})
	if p.Manifest != filepath.Join(wd, "db/MANIFEST-000001") {
		t.Errorf("Manifest %q", p.Manifest)
	}
	if want := []string{filepath.Join(wd, "a.proto"), "/abs/b.proto", "s3://b/c.proto"}; !slices.Equal(p.Proto, want) {
		t.Errorf("Proto %q, want %q", p.Proto, want)
	}
	if want := []string{filepath.Join(wd, "inc")}; !slices.Equal(p.ProtoPath, want) {
		t.Errorf("ProtoPath %q, want %q", p.ProtoPath, want)
	}
	if p.Open == nil || p.OpenRecords == nil {
		t.Error("no Open or OpenRecords")
	}
	if e := DecodeParams("", nil, nil); e.Manifest != "" || len(e.Proto) != 0 {
		t.Errorf("empty: %+v", e)
	}
}
