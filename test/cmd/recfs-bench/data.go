package main

import (
	"archive/zip"
	"bufio"
	"fmt"
	"math/rand/v2"
	"os"
	"path/filepath"

	"github.com/grailbio/base/recordio"
	"github.com/syndtr/goleveldb/leveldb/journal"
)

// Generated data is deterministic: record i of a given size is the same
// bytes in every run. Records are readable text (so grep has work to do)
// cut from a pool of pseudo-random words; every 100th record starts with
// the word "needle" that the grep rows search for.

// needle is the word grep -r looks for; it is in records 0, 100, 200, ...
const needle = "needle"

// textPool is 1 MiB of words from a fixed seed.
var textPool = func() []byte {
	words := []string{"alpha", "bravo", "charlie", "delta", "echo", "foxtrot", "golf", "hotel",
		"india", "juliet", "kilo", "lima", "mike", "november", "oscar", "papa", "quebec",
		"romeo", "sierra", "tango", "uniform", "victor", "whiskey", "xray", "yankee", "zulu"}
	r := rand.New(rand.NewPCG(1, 2))
	p := make([]byte, 0, 1<<20+64)
	for len(p) < 1<<20 {
		p = append(p, words[r.IntN(len(words))]...)
		if r.IntN(12) == 0 {
			p = append(p, '\n')
		} else {
			p = append(p, ' ')
		}
	}
	return p[:1<<20]
}()

// fillRecord fills dst with record i's bytes (len(dst) of them).
func fillRecord(dst []byte, i int) {
	off := (i * 4099) % len(textPool)
	for k := 0; k < len(dst); {
		n := copy(dst[k:], textPool[off:])
		k += n
		off = 0
	}
	if i%100 == 0 && len(dst) >= len(needle) {
		copy(dst, needle)
	}
}

// createBuffered creates path and returns a buffered writer and a function
// that flushes and closes it.
func createBuffered(path string) (*bufio.Writer, func() error, error) {
	if err := os.MkdirAll(filepath.Dir(path), 0o755); err != nil {
		return nil, nil, err
	}
	f, err := os.Create(path)
	if err != nil {
		return nil, nil, err
	}
	w := bufio.NewWriterSize(f, 1<<20)
	return w, func() error {
		if err := w.Flush(); err != nil {
			f.Close()
			return err
		}
		return f.Close()
	}, nil
}

// writeLeveldb writes a leveldb log of n records of recSize bytes with
// goleveldb's journal writer (a reference writer, not the code under test).
func writeLeveldb(path string, n, recSize int) error {
	w, done, err := createBuffered(path)
	if err != nil {
		return err
	}
	jw := journal.NewWriter(w)
	buf := make([]byte, recSize)
	for i := 0; i < n; i++ {
		rw, err := jw.Next()
		if err != nil {
			return err
		}
		fillRecord(buf, i)
		if _, err := rw.Write(buf); err != nil {
			return err
		}
	}
	if err := jw.Close(); err != nil {
		return err
	}
	return done()
}

// writeLeveldbBig writes a leveldb log holding one record of size bytes,
// streamed through goleveldb's journal writer 1 MiB at a time.
func writeLeveldbBig(path string, size int64) error {
	w, done, err := createBuffered(path)
	if err != nil {
		return err
	}
	jw := journal.NewWriter(w)
	rw, err := jw.Next()
	if err != nil {
		return err
	}
	buf := make([]byte, 1<<20)
	for i, left := 0, size; left > 0; i++ {
		k := int64(len(buf))
		if left < k {
			k = left
		}
		fillRecord(buf[:k], i+1) // i+1: no needle, one big text
		if _, err := rw.Write(buf[:k]); err != nil {
			return err
		}
		left -= k
	}
	if err := jw.Close(); err != nil {
		return err
	}
	return done()
}

// writeRecordIO writes a grailbio recordio file (v2, no transformer) of n
// items of recSize bytes with grailbio's own writer, in blocks of about
// 16 MiB.
func writeRecordIO(path string, n, recSize int) error {
	w, done, err := createBuffered(path)
	if err != nil {
		return err
	}
	// grailbio packs 16384 items a block by default: 1 GiB blocks of 64 KiB
	// items, past recfs's 256 MiB decoded-block cap. Blocks of about
	// 16 MiB (16384 items of 1 KiB, the default there) keep both readers
	// in their normal range.
	items := uint32(max(1, (16<<20)/recSize))
	rw := recordio.NewWriter(w, recordio.WriterOpts{MaxItems: items})
	for i := 0; i < n; i++ {
		buf := make([]byte, recSize) // Append keeps the slice until the block is flushed
		fillRecord(buf, i)
		rw.Append(buf)
	}
	if err := rw.Finish(); err != nil {
		return err
	}
	return done()
}

// recordName is the name recfs gives record i of a directory of fewer than
// a million records (6 digits); the peers' copies use the same names.
func recordName(i, total int) string {
	width := 6
	for m := 1_000_000; total > m; m *= 10 {
		width++
	}
	return fmt.Sprintf("%0*d", width, i)
}

// writeFiles writes n records of recSize bytes as files named like recfs's
// record files into dir (the tmpfs peer and the squashfs/zip source).
func writeFiles(dir string, n, recSize int) error {
	if err := os.MkdirAll(dir, 0o755); err != nil {
		return err
	}
	buf := make([]byte, recSize)
	for i := 0; i < n; i++ {
		fillRecord(buf, i)
		if err := os.WriteFile(filepath.Join(dir, recordName(i, n)), buf, 0o444); err != nil {
			return err
		}
	}
	return nil
}

// writeZip writes n records as stored (uncompressed) members of a zip, the
// same names and bytes as writeFiles, so fuse-zip does no inflating.
func writeZip(path string, n, recSize int) error {
	w, done, err := createBuffered(path)
	if err != nil {
		return err
	}
	zw := zip.NewWriter(w)
	buf := make([]byte, recSize)
	for i := 0; i < n; i++ {
		fillRecord(buf, i)
		hdr := &zip.FileHeader{Name: recordName(i, n), Method: zip.Store}
		hdr.SetMode(0o444)
		fw, err := zw.CreateHeader(hdr)
		if err != nil {
			return err
		}
		if _, err := fw.Write(buf); err != nil {
			return err
		}
	}
	if err := zw.Close(); err != nil {
		return err
	}
	return done()
}

// writeLines writes n lines of lineLen-1 text bytes each (no needle), the
// input of the append rows; it returns the records as the lines hold them.
func writeLines(path string, n, lineLen int) ([][]byte, error) {
	w, done, err := createBuffered(path)
	if err != nil {
		return nil, err
	}
	recs := make([][]byte, n)
	for i := range recs {
		r := make([]byte, lineLen-1)
		fillRecord(r, i*7+1)
		for k, c := range r {
			if c == '\n' {
				r[k] = ' '
			}
		}
		recs[i] = r
		w.Write(r)
		w.WriteByte('\n')
	}
	return recs, done()
}

// fileSize returns path's size, or 0.
func fileSize(path string) int64 {
	st, err := os.Stat(path)
	if err != nil {
		return 0
	}
	return st.Size()
}
