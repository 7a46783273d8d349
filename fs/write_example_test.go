package fs_test

import (
	"context"
	"fmt"
	"os"
	"path/filepath"

	"github.com/recfs/recfs/codec"
	"github.com/recfs/recfs/fs"
	"github.com/recfs/recfs/index"
)

// A writable tree appends a created file as one record when it is flushed,
// as a mount does on close(2).
func ExampleTree_Create() {
	ctx := context.Background()
	dir, _ := os.MkdirTemp("", "example")
	defer os.RemoveAll(dir)
	path := filepath.Join(dir, "events.log")
	tb, err := index.Create(ctx, path, codec.LevelDB, false, index.Options{CacheDir: "-", Writable: true})
	if err != nil {
		fmt.Println(err)
		return
	}
	tree, err := fs.NewFile(path, tb, fs.Options{ReadWrite: true})
	if err != nil {
		fmt.Println(err)
		return
	}
	defer tree.Close()

	_, h, err := tree.Create(ctx, tree.Root(), "new.json")
	if err != nil {
		fmt.Println(err)
		return
	}
	h.WriteAt([]byte(`{"event":"login"}`), 0)
	rec, err := h.Flush(ctx) // close(2)
	h.Close()                // release
	fmt.Println("appended as record", rec, err)

	n, _ := tree.Lookup(ctx, tree.Root(), fs.RecordName(rec, tb.Len()))
	a, _ := tree.Getattr(ctx, n)
	fmt.Println(fs.RecordName(rec, tb.Len()), a.Size, "bytes")
	_, err = tree.Lookup(ctx, tree.Root(), "new.json")
	fmt.Println("new.json:", err)
	// Output:
	// appended as record 0 <nil>
	// 000000 17 bytes
	// new.json: file does not exist
}
