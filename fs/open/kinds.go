package open

import (
	"context"
	"os"
	"path/filepath"
	"strings"

	"github.com/recfs/recfs/fs"
	"github.com/recfs/recfs/index"
)

// A kind is one row of the table of kinds: how targets of one source kind
// are spelt, and how one opens as a table ([Table]), a tree ([Tree]) and a
// sequential table ([Sequential]). A kind the lean link leaves out keeps
// its row there with openers that fail with [ErrNotLinked] (its
// <kind>_lean.go), so that its targets are still told from paths.
type kind struct {
	kind  Kind
	is    func(target string) bool // the spelling: whether target is of this kind
	table func(ctx context.Context, target string, o Options) (*index.Table, error)
	tree  func(ctx context.Context, target string, o TreeOptions) (*fs.Tree, error)
	seq   func(ctx context.Context, target string, o Options) (Seq, error)
}

// kinds returns the table of kinds, in the order targets are tried: the
// first row whose spelling matches a target opens it. Local, last,
// matches every target. It is a function, not a package-level map or
// variable: that costs the program no init work, and lets openers call
// KindOf (a variable would be an initialization cycle).
func kinds() []kind {
	return []kind{
		{S3Prefix, isS3Prefix, prefixTable, s3PrefixTree, prefixSeq},
		{S3Object, isS3Object, s3Table, s3ObjectTree, s3Seq},
		{HTTP, isHTTPURL, httpTable, httpTree, httpSeq},
		{Local, isLocal, localOpen, localTree, localSeq},
	}
}

// kindOf is the row of the kind of target.
func kindOf(target string) kind {
	ks := kinds()
	for _, k := range ks {
		if k.is(target) {
			return k
		}
	}
	return ks[len(ks)-1]
}

// isS3Prefix and isS3Object tell the two spellings of s3:// URLs apart
// (s3IsPrefix is the linked S3 source's, or the lean link's copy).
func isS3Prefix(target string) bool {
	return strings.HasPrefix(target, "s3://") && s3IsPrefix(target)
}

func isS3Object(target string) bool {
	return strings.HasPrefix(target, "s3://") && !s3IsPrefix(target)
}

// isLocal: whatever no other kind claims is a path.
func isLocal(string) bool { return true }

// prefixTable and prefixSeq refuse an s3:// prefix where one object is
// wanted, in every link.
func prefixTable(_ context.Context, target string, _ Options) (*index.Table, error) {
	return nil, usagef("%s is a prefix; these commands read one object (s3://bucket/key)", target)
}

func prefixSeq(_ context.Context, target string, _ Options) (Seq, error) {
	return Seq{}, usagef("%s is a prefix; these commands read one object (s3://bucket/key)", target)
}

// localTree is Tree for a local path, made absolute: a directory's tree
// or one record file's.
func localTree(ctx context.Context, target string, o TreeOptions) (*fs.Tree, error) {
	abs, err := filepath.Abs(target)
	if err != nil {
		return nil, err
	}
	fi, err := os.Stat(abs)
	if err != nil {
		return nil, err
	}
	if fi.IsDir() {
		return dirTree(abs, o)
	}
	return fileTree(ctx, abs, o)
}
