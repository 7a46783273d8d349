package main

import (
	"context"
	"io"
	"os"
	"path/filepath"
	"strings"

	"github.com/sirupsen/logrus"
	"github.com/spf13/cobra"

	"github.com/recfs/recfs/codec"
	"github.com/recfs/recfs/codec/decoders"
	"github.com/recfs/recfs/fs"
	"github.com/recfs/recfs/index"
	"github.com/recfs/recfs/source/s3"
)

// treeSpec says how to serve a source as a tree: what mount and serve
// share once their flags are read.
type treeSpec struct {
	index     index.Options
	plan      *decoders.Plan // records decoded as --decode says (nil: raw)
	hideOther bool           // a directory tree hides files that are not record files
	follow    bool           // the sources are followed (the caller starts following)
	rw        bool           // records may be appended (local sources)
	// newFormat and newTrailer: what mkdir makes in a writable directory tree.
	newFormat  codec.Format
	newTrailer bool
	fs         fs.Options // the tree's options; the fields above fill the rest
}

// openTree opens the source srcAbs (resolved by sourcePath, with its info)
// as the tree recfs mount and recfs serve show: an s3:// prefix or
// object, a directory of record files, or one record file.
func openTree(cmd *cobra.Command, srcAbs string, srcInfo os.FileInfo, sp treeSpec) (*fs.Tree, error) {
	iopts, plan := sp.index, sp.plan
	fo := sp.fs
	switch {
	case s3.IsURL(srcAbs) && isS3Prefix(srcAbs):
		return s3DirTree(cmd, srcAbs, iopts, plan, sp.hideOther, sp.follow, fo)
	case s3.IsURL(srcAbs):
		return s3Tree(cmd, srcAbs, iopts, plan, sp.follow, fo)
	case srcInfo.IsDir():
		fo.Open = func(ctx context.Context, sf fs.SourceFile) (fs.Source, error) {
			logrus.WithField("file", sf.Path).Debug("indexing")
			o := iopts
			o.Reopen = sf.Reopen
			t, err := index.OpenFile(ctx, sf.File, sf.Path, o)
			if err != nil {
				return nil, err
			}
			v, err := viewSource(plan, t, sf.Path)
			if err != nil {
				t.Close()
				return nil, err
			}
			return v, nil
		}
		fo.Detect = func(r io.ReaderAt, size int64) bool {
			_, err := index.Detect(r, size)
			return err == nil
		}
		fo.EmptyRecord = index.EmptyRecordName
		fo.HideOther, fo.ReadWrite = sp.hideOther, sp.rw
		fo.Create = func(ctx context.Context, sf fs.SourceFile) (fs.Source, error) {
			nf := sp.newFormat
			switch strings.ToLower(filepath.Ext(sf.Path)) {
			case ".rio", ".recordio":
				nf = codec.RecordIO
			case ".tfrecord", ".tfrecords":
				nf = codec.TFRecord
			}
			logrus.WithFields(logrus.Fields{"file": sf.Path, "format": nf}).Info("creating record file")
			o := iopts
			o.Format, o.Reopen = nf, sf.Reopen
			return index.CreateFile(ctx, sf.File, sf.Path, nf, nf == codec.RecordIO && sp.newTrailer, o)
		}
		return fs.NewDir(srcAbs, fo)
	}
	iopts.Reopen = reopenNoFollow(srcAbs)
	t, err := openTable(cmd, srcAbs, iopts)
	if err != nil {
		return nil, err
	}
	v, err := viewSource(plan, t, srcAbs)
	if err != nil {
		t.Close()
		return nil, err
	}
	fo.ReadWrite = sp.rw
	return fs.NewFile(srcAbs, v, fo)
}
