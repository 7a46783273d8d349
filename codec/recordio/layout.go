package recordio

import (
	"sync"

	"github.com/recfs/recfs/codec"
)

// Item layouts of decoded blocks. A reader serves an item of a transformed
// block only if the block, as decoded now, has that item at the offset and
// length the caller's table says: a block of another version of the file
// is refused, not served. The layout is parsed once per block from the
// decoded stream's first pages and kept, bounded by maxLayoutItems.

// maxLayoutItems bounds the item offsets a reader keeps for checking.
const maxLayoutItems = 1 << 20

// blockLayout is where the items of one decoded block lie.
type blockLayout struct {
	offs  []int64 // raw offset of each item
	sizes []int64
}

// layouts is a reader's cache of block layouts.
type layouts struct {
	mu    sync.Mutex
	m     map[int64]*blockLayout
	items int
}

func (l *layouts) get(block int64) *blockLayout {
	l.mu.Lock()
	defer l.mu.Unlock()
	return l.m[block]
}

func (l *layouts) put(block int64, bl *blockLayout) {
	l.mu.Lock()
	defer l.mu.Unlock()
	if l.m == nil || l.items+len(bl.offs) > maxLayoutItems {
		l.m, l.items = map[int64]*blockLayout{}, 0
	}
	l.m[block] = bl
	l.items += len(bl.offs)
}

// holds reports whether the block has item loc.Item at raw offset loc.Off
// with length loc.Len.
func (bl *blockLayout) holds(loc ItemLoc) bool {
	return loc.Item >= 0 && loc.Item < len(bl.sizes) && bl.sizes[loc.Item] == loc.Len && bl.offs[loc.Item] == loc.Off
}

// checkLayout fails unless the transformed v2 block at loc.Block holds the
// item loc describes.
func (rd *Reader) checkLayout(loc ItemLoc) error {
	if rd.format != codec.RecordIO {
		return nil
	}
	bl := rd.layouts.get(loc.Block)
	if bl == nil {
		p := &packedHdr{bound: rd.opts.maxBlock()}
		for idx := int64(0); p.state < 2; idx++ {
			end := false
			err := rd.page(loc.Block, idx, func(pg []byte) error {
				end = len(pg) == 0
				return p.feed(pg)
			})
			if err != nil {
				return err
			}
			if end {
				break
			}
		}
		if p.state < 2 {
			return rd.corrupt(loc.Block, codec.ErrCorrupt, "%v", p.finish(0))
		}
		bl = &blockLayout{offs: make([]int64, len(p.sizes)), sizes: p.sizes}
		off := p.hdrLen
		for i, sz := range p.sizes {
			bl.offs[i] = off
			off += sz
		}
		rd.layouts.put(loc.Block, bl)
	}
	if !bl.holds(loc) {
		return rd.corrupt(loc.Block, codec.ErrCorrupt, "block has no item %d of %d bytes at %d", loc.Item, loc.Len, loc.Off)
	}
	return nil
}
