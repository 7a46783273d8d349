package main

import (
	"fmt"
	"io"
	"path/filepath"
	"strings"

	"github.com/spf13/cobra"

	"github.com/recfs/recfs/codec/dbdecode"
	"github.com/recfs/recfs/fs"
	"github.com/recfs/recfs/index"
)

// Values of --decode.
const (
	decodeNone     = ""
	decodeBatch    = "batch"
	decodeRocksDB  = "batch-rocksdb"
	decodePebble   = "batch-pebble"
	decodeManifest = "manifest"
	decodeAuto     = "auto"
)

// decodeHelp is the --decode flag's usage line.
const decodeHelp = `show database records as text: "batch" (WriteBatches of a leveldb/RocksDB/pebble WAL; "batch-rocksdb" or "batch-pebble" read the tags 19-25 the two use differently as that database's), "manifest" (VersionEdits of a MANIFEST), or "auto" (by file name: *.log batch, MANIFEST-* manifest, others raw)`

// addDecodeFlag registers --decode on cmd.
func addDecodeFlag(cmd *cobra.Command) *string {
	mode := new(string)
	cmd.Flags().StringVar(mode, "decode", decodeNone, decodeHelp)
	_ = cmd.RegisterFlagCompletionFunc("decode", fixedCompletion(decodeBatch, decodeManifest, decodeAuto, decodeRocksDB, decodePebble))
	return mode
}

// checkDecode checks a --decode value.
func checkDecode(mode string) error {
	switch mode {
	case decodeNone, decodeBatch, decodeRocksDB, decodePebble, decodeManifest, decodeAuto:
		return nil
	}
	return usagef("--decode %q: want batch, manifest, auto, batch-rocksdb or batch-pebble", mode)
}

// decodeFor resolves mode for the record file at path: "auto" looks at the
// name; the result is decodeBatch, decodeManifest or decodeNone.
func decodeFor(mode, path string) string {
	if mode != decodeAuto {
		return mode
	}
	base := filepath.Base(path)
	switch {
	case strings.HasPrefix(base, "MANIFEST-"):
		return decodeManifest
	case strings.EqualFold(filepath.Ext(base), ".log"):
		return decodeBatch
	}
	return decodeNone
}

// recordView returns the fs view of a resolved decode mode; false for none.
func recordView(mode string) (fs.RecordView, bool) {
	dialects := map[string]dbdecode.Dialect{decodeBatch: dbdecode.DialectAuto,
		decodeRocksDB: dbdecode.DialectRocksDB, decodePebble: dbdecode.DialectPebble}
	if d, ok := dialects[mode]; ok {
		o := dbdecode.Options{Dialect: d}
		return fs.RecordView{Name: mode, Render: func(dst, rec []byte) []byte {
			dst, _ = dbdecode.AppendBatch(dst, rec, o)
			return dst
		}}, true
	}
	switch mode {
	case decodeManifest:
		return fs.RecordView{Name: mode, Render: func(dst, rec []byte) []byte {
			dst, _ = dbdecode.AppendVersionEdit(dst, rec)
			return dst
		}}, true
	}
	return fs.RecordView{}, false
}

// viewSource wraps src in the view --decode asks for the file at path.
func viewSource(src fs.Source, mode, path string) fs.Source {
	if v, ok := recordView(decodeFor(mode, path)); ok {
		return fs.View(src, v)
	}
	return src
}

// recordDecoder writes the decoded text of records for cat --decode,
// reusing its buffers from record to record.
type recordDecoder struct {
	v        fs.RecordView
	raw, out []byte
}

// copy writes record n of t, decoded, to w.
func (d *recordDecoder) copy(w io.Writer, t *index.Table, n int64) error {
	size := t.Size(n)
	if size > fs.DefaultViewMaxRecord {
		return fmt.Errorf("record %d: %d bytes are more than --decode reads into memory (%d)", n, size, fs.DefaultViewMaxRecord)
	}
	if int64(cap(d.raw)) < size {
		d.raw = make([]byte, size)
	}
	raw := d.raw[:size]
	k, err := t.ReadAt(n, raw, 0)
	if int64(k) == size && err == io.EOF {
		err = nil
	}
	if err == nil && int64(k) < size {
		err = io.ErrUnexpectedEOF
	}
	if err != nil {
		return fmt.Errorf("record %d (file offset %d): %w", n, t.Offset(n), err)
	}
	d.out = d.v.Render(d.out[:0], raw)
	_, err = w.Write(d.out)
	return err
}

// catDecoder returns the decoder of cat --decode for the file at path, nil
// without --decode.
func catDecoder(mode, path string) (*recordDecoder, error) {
	if err := checkDecode(mode); err != nil {
		return nil, err
	}
	if mode == decodeNone {
		return nil, nil
	}
	v, ok := recordView(decodeFor(mode, path))
	if !ok {
		return nil, usagef("--decode auto: %s is named neither *.log nor MANIFEST-*; say --decode batch or manifest", filepath.Base(path))
	}
	return &recordDecoder{v: v}, nil
}
