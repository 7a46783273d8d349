//go:build recfs_lean

package open

import (
	"context"
	"fmt"

	"github.com/recfs/recfs/fs"
	"github.com/recfs/recfs/index"
)

// The openers of the rows of the kinds the lean link (build tag
// recfs_lean) leaves out: each fails with ErrNotLinked. The recfs command
// never gets here with such a target — its lean binary hands such command
// lines to recfs-full.

func notLinked(target string) error { return fmt.Errorf("%s: %w", target, ErrNotLinked) }

func notLinkedTable(_ context.Context, target string, _ Options) (*index.Table, error) {
	return nil, notLinked(target)
}

func notLinkedTree(_ context.Context, target string, _ TreeOptions) (*fs.Tree, error) {
	return nil, notLinked(target)
}

func notLinkedSeq(_ context.Context, target string, _ Options) (Seq, error) {
	return Seq{}, notLinked(target)
}
