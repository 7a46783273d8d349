package fs_test

import (
	"bytes"
	"fmt"
	"io"
	iofs "io/fs"
	"os"
	"path/filepath"

	"github.com/recfs/recfs/codec"
	"github.com/recfs/recfs/fs"
	"github.com/recfs/recfs/index"
)

// memTable is tiny in-memory fs.Records.
type memTable struct{ recs []string }

func (m memTable) Len() int64           { return int64(len(m.recs)) }
func (m memTable) Size(n int64) int64   { return int64(len(m.recs[n])) }
func (m memTable) Offset(n int64) int64 { return 0 }
func (m memTable) ReadAt(n int64, p []byte, off int64) (int, error) {
	return bytes.NewReader([]byte(m.recs[n])).ReadAt(p, off)
}
func (m memTable) HasTrailer() bool                             { return false }
func (m memTable) TrailerSize() int64                           { return 0 }
func (m memTable) ReadTrailerAt(p []byte, _ int64) (int, error) { return 0, io.EOF }
func (m memTable) Header() []index.HeaderEntry                  { return nil }
func (m memTable) Damage() []codec.Damage                       { return nil }
func (m memTable) Info() index.Info                             { return index.Info{Format: codec.LevelDB} }
func (m memTable) Close() error                                 { return nil }

// The tree of one record file, read through io/fs without a kernel.
func ExampleNewFile() {
	dir, _ := os.MkdirTemp("", "example")
	defer os.RemoveAll(dir)
	path := filepath.Join(dir, "events.log")
	_ = os.WriteFile(path, nil, 0o644) // owner and times come from the file

	tree, err := fs.NewFile(path, memTable{recs: []string{"alpha", "beta", "gamma"}}, fs.Options{})
	if err != nil {
		panic(err)
	}
	ents, _ := iofs.ReadDir(tree.FS(), ".")
	for _, e := range ents {
		fmt.Println(e.Name())
	}
	b, _ := iofs.ReadFile(tree.FS(), "2") // the unpadded name works too
	fmt.Printf("%s\n", b)
	// Output:
	// .recfs
	// 000000
	// 000001
	// 000002
	// gamma
}

// Record names are zero-padded so that byte order is record order.
func ExampleRecordName() {
	fmt.Println(fs.RecordName(42, 100), fs.RecordName(42, 10_000_000))
	n, ok := fs.ParseRecordName("42", 100)
	fmt.Println(n, ok)
	_, ok = fs.ParseRecordName("0042", 100)
	fmt.Println(ok)
	// Output:
	// 000042 0000042
	// 42 true
	// false
}
