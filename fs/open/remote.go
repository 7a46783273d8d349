//go:build !recfs_lean

package open

import (
	"context"
	"fmt"
	"io"
	"time"

	"github.com/recfs/recfs/fs"
	"github.com/recfs/recfs/index"
	"github.com/recfs/recfs/source"
)

// What the remote sources (s3.go, http.go) share; the lean link (build
// tag recfs_lean) has neither.

// remoteObject is an object source Sequential reads.
type remoteObject interface {
	io.ReaderAt
	io.Closer
	Size() int64
}

// remoteSeq builds the sequential table of obj, the object at url.
func remoteSeq(ctx context.Context, url string, obj remoteObject, o Options) (Seq, error) {
	io := indexOptions(url, o.Index)
	done := o.progress("indexing "+url, &io)
	t, err := index.Build(ctx, obj, obj.Size(), io)
	done()
	if err != nil {
		obj.Close()
		return Seq{}, fmt.Errorf("%s: %w", url, err)
	}
	return Seq{Table: t, src: obj}, nil
}

// objectTree is the read-only tree of one remote object, obj opened with
// table t (whose modification time is mod). The table owns the object
// (closes it), and follows it when the tree does (index.Table.Follow asks
// for its version; a new one replaces the records as a new generation).
func objectTree(url string, t *index.Table, obj source.Source, mod time.Time, o TreeOptions) (*fs.Tree, error) {
	v, err := View(o.Decode, t, url)
	if err != nil {
		t.Close()
		return nil, err
	}
	tree, err := fs.NewObject(url, obj.Size(), mod, v, o.FS)
	if err != nil {
		v.Close()
		return nil, err
	}
	return tree, nil
}
