package index

// Appending to an existing recordio v2 file, crash-safely: the durable
// procedure over codec/recordio's pure Tail (what the file's end holds,
// the framing of new blocks).
//
// Design. OpenRecordIOAppender first runs RepairRecordIO, then reads the
// header (transformers, trailer flag) and looks for the trailer from the end
// of the file (spec 8.1). Appends then take one of two paths:
//
//   - File without a trailer: new body blocks are written in place at the
//     end of the file and fsynced; Append returns after the fsync. A crash
//     leaves the old file plus a torn tail. The reference scanner reads such
//     a tail as follows: a tail ending inside the first chunk of a new block
//     lies past its scan limit and is ignored (no error); a tail ending
//     exactly on a chunk boundary inside a multi-chunk block hits a clean EOF
//     and the incomplete block is silently dropped; a tail ending inside a
//     later chunk of a multi-chunk block makes it fail with "unexpected EOF"
//     after the earlier items. Whole blocks written before the crash are read
//     as items (their Append had not returned, so keeping them is allowed).
//     RepairRecordIO (run by the next OpenRecordIOAppender) truncates the
//     file back to the end of the last block that decodes cleanly, which
//     removes every torn state.
//   - File with a trailer: Append first writes a journal file
//     "<path>.recfs-journal" holding the original size, the trailer block's
//     offset and the trailer block's bytes, protected by a CRC, and fsyncs it
//     and the directory. Only then does it overwrite the file from the
//     trailer offset with the new body blocks followed by the same trailer
//     block, fsync the file, remove the journal and fsync the directory;
//     Append returns after that. On the next open, RepairRecordIO finds the
//     journal. If it is valid and the file already ends with the saved
//     trailer block right after new blocks that all decode cleanly, the
//     append finished everything but removing its journal: the new state is
//     kept (the reference scanner reads it already) and the journal removed.
//     Otherwise the append may have been torn anywhere, so it rolls back —
//     writes the saved trailer block at the saved offset and truncates the
//     file just after it — then removes the journal. (Rolling back is always
//     correct: an Append whose journal still exists has not returned, so its
//     items may be dropped; the trailer is never lost.) A journal that is
//     torn or fails its CRC was never completed, which means the file was
//     not touched yet: it is deleted.
//
// Concurrency. Appends and repairs run only with an exclusive flock of the
// record file held: a journal seen under the lock belongs to an append
// that crashed, never to one still running, so rolling it back loses
// nothing that was acknowledged.
//
// Hostile directories. The journal lives next to the record file, where
// other users may be able to create entries. It is created with
// O_CREAT|O_EXCL|O_NOFOLLOW and mode 0600, so it is never written through a
// planted symlink or into an existing file, and a repair applies a journal
// only if it is a regular file (opened with O_NOFOLLOW) owned by root, the
// running user or the record file's owner; anything else at that name is
// removed unread (ErrUntrustedJournal).
//
// A header that promises a trailer the file does not end with is treated as
// a file without a trailer. The trailer's content is kept as it was; an
// application whose trailer indexes the items must rewrite it itself.

import (
	"bytes"
	"encoding/binary"
	"errors"
	"fmt"
	"io/fs"
	"os"
	"path/filepath"

	"github.com/recfs/recfs/codec"
	"github.com/recfs/recfs/codec/recordio"
)

// RecordIOAppendOptions configures OpenRecordIOAppender.
type RecordIOAppendOptions struct {
	MaxItems      int   // items per block are MaxItems+1, as recordio.WriterOptions.MaxItems
	MaxBlockBytes int64 // optional cut of blocks by raw size, as recordio.WriterOptions.MaxBlockBytes

	fsys appendFS // nil = the operating system; tests inject crashing file systems
}

// RecordIOJournalSuffix is appended to a file's path to name its append journal.
const RecordIOJournalSuffix = ".recfs-journal"

// rioJournalMagic starts every journal file.
var rioJournalMagic = [8]byte{'r', 'e', 'c', 'f', 's', 'J', '1', '\n'}

// encodeJournal lays out: magic, original size, trailer offset, trailer
// length (u64 LE each), trailer block bytes, CRC-32C of all previous bytes.
func encodeJournal(origSize, trailerOff int64, trailer []byte) []byte {
	b := append([]byte(nil), rioJournalMagic[:]...)
	b = binary.LittleEndian.AppendUint64(b, uint64(origSize))
	b = binary.LittleEndian.AppendUint64(b, uint64(trailerOff))
	b = binary.LittleEndian.AppendUint64(b, uint64(len(trailer)))
	b = append(b, trailer...)
	return binary.LittleEndian.AppendUint32(b, codec.CRC32C(b))
}

// decodeJournal returns the journal's fields, or ok == false if it is torn
// or damaged.
func decodeJournal(b []byte) (origSize, trailerOff int64, trailer []byte, ok bool) {
	const fixed = 8 + 24
	if len(b) < fixed+4 || !bytes.Equal(b[:8], rioJournalMagic[:]) {
		return 0, 0, nil, false
	}
	n := binary.LittleEndian.Uint64(b[24:])
	if n != uint64(len(b)-fixed-4) {
		return 0, 0, nil, false
	}
	if codec.CRC32C(b[:len(b)-4]) != binary.LittleEndian.Uint32(b[len(b)-4:]) {
		return 0, 0, nil, false
	}
	origSize = int64(binary.LittleEndian.Uint64(b[8:]))
	trailerOff = int64(binary.LittleEndian.Uint64(b[16:]))
	trailer = b[fixed : len(b)-4]
	if trailerOff < rioChunk || origSize != trailerOff+int64(len(trailer)) || len(trailer)%rioChunk != 0 {
		return 0, 0, nil, false
	}
	return origSize, trailerOff, trailer, true
}

// RepairRecordIO brings a recordio v2 file back to a consistent state after
// an append crashed: it rolls back an interrupted trailer-rewriting append
// using its journal, deletes a torn journal, and moves a torn block after
// the last cleanly decoding block out of the file (saved in the torn-tail
// directory of the user's cache directory first). Bytes there that are not
// the start of a block (recordio.TornTail) stay, and the error is a
// *TailError. Every move is logged. It reports whether it changed the
// file. It holds an exclusive flock of the file while it works, the lock
// every appender holds, so it never mistakes a running append for a
// crashed one.
func RepairRecordIO(path string) (repaired bool, err error) {
	return repairPath(osFS{}, path, tailPolicy{})
}

// repairRecordIOFile is RepairRecordIO through f, the file at path opened
// as an append destination (path names the journal), under p. The caller
// must hold f's append lock.
func repairRecordIOFile(f appendDest, path string, p tailPolicy) (repaired bool, err error) {
	return repairRecordIO(osFS{}, destFile{f}, path, p)
}

// repairPath opens and locks the file at path, then repairs it.
func repairPath(fsys appendFS, path string, p tailPolicy) (bool, error) {
	f, err := fsys.OpenFile(path, os.O_RDWR, 0)
	if err != nil {
		return false, err
	}
	defer f.Close()
	if err := f.Lock(); err != nil {
		return false, err
	}
	repaired, err := repairRecordIO(fsys, f, path, p)
	if err != nil {
		return repaired, err
	}
	return repaired, f.Close()
}

// repairRecordIO repairs the file f (at path) with its lock held, under
// p.
func repairRecordIO(fsys appendFS, f appendFile, path string, p tailPolicy) (bool, error) {
	jpath := path + RecordIOJournalSuffix
	dir := filepath.Dir(path)
	repaired := false
	j, err := fsys.ReadJournal(jpath, f)
	switch {
	case err == nil:
		if _, toff, trailer, ok := decodeJournal(j); ok && !journaledAppendCompleted(f, toff, trailer) {
			// Torn anywhere after the journal was made durable: roll back.
			size, err := f.Size()
			if err != nil {
				return false, err
			}
			if err := rollBack(f, toff, trailer); err != nil {
				return false, err
			}
			defer p.tell(MovedTail{Path: path, Off: toff, Len: max(size-toff, 0), Reason: MovedRollback})
		}
		// Else the append got as far as rewriting the trailer (keep it), or
		// the journal itself is torn (the file was not touched yet).
		if err := fsys.Remove(jpath); err != nil {
			return false, err
		}
		if err := fsys.SyncDir(dir); err != nil {
			return false, err
		}
		repaired = true
	case errors.Is(err, ErrUntrustedJournal):
		// Planted, not ours: never applied; removed so appends can make
		// their own journal (removing a name never follows a link).
		if err := fsys.Remove(jpath); err != nil && !errors.Is(err, fs.ErrNotExist) {
			return false, err
		}
	case errors.Is(err, fs.ErrNotExist):
	default:
		return false, err
	}
	size, err := f.Size()
	if err != nil || size == 0 {
		return repaired, err
	}
	end, err := recordio.ConsistentEnd(f, size)
	if err != nil || end == size {
		return repaired, err
	}
	torn, why := recordio.TornTail(f, end, size)
	if !torn && !p.force {
		return repaired, &TailError{Path: path, Off: end, Len: size - end, Reason: why}
	}
	if err := p.cut(f, path, end, size, torn); err != nil {
		return repaired, err
	}
	return true, nil
}

// rollBack puts the saved trailer block back at toff and cuts the file
// just after it, which restores the file as it was before the append.
func rollBack(f appendFile, toff int64, trailer []byte) error {
	if _, err := f.WriteAt(trailer, toff); err != nil {
		return err
	}
	if err := f.Truncate(toff + int64(len(trailer))); err != nil {
		return err
	}
	return f.Sync()
}

// journaledAppendCompleted reports whether the append a journal describes
// finished writing (see recordio.AppendCompleted).
func journaledAppendCompleted(f appendFile, toff int64, trailer []byte) bool {
	size, err := f.Size()
	return err == nil && recordio.AppendCompleted(f, size, toff, trailer)
}

// RecordIOAppender appends body blocks to an existing recordio v2 file,
// durably and crash-safely (see the package's recordio_append.go for the
// design). It is not safe for concurrent use; the flock it (or its caller)
// holds keeps other appenders and repairs out.
type RecordIOAppender struct {
	fsys       appendFS
	path       string
	f          appendFile
	owned      bool // Close closes f (and so releases the lock)
	o          RecordIOAppendOptions
	tail       *recordio.Tail // the file's chain and trailer; encodes blocks
	size       int64
	trailerOff int64  // offset of the trailer block, when trailer != nil
	trailer    []byte // the trailer block's chunks, verbatim
	err        error
}

// OpenRecordIOAppender opens the file at path for appending and takes an
// exclusive flock of it, held until Close; then it repairs the file if a
// previous append crashed (see RepairRecordIO). The file must be a recordio
// v2 file with an intact header.
func OpenRecordIOAppender(path string, o RecordIOAppendOptions) (*RecordIOAppender, error) {
	if o.fsys == nil {
		o.fsys = osFS{}
	}
	f, err := o.fsys.OpenFile(path, os.O_RDWR, 0)
	if err != nil {
		return nil, err
	}
	a, err := openAppender(f, path, o)
	if err != nil {
		f.Close()
		return nil, err
	}
	a.owned = true
	return a, nil
}

func openAppender(f appendFile, path string, o RecordIOAppendOptions) (*RecordIOAppender, error) {
	if err := f.Lock(); err != nil {
		return nil, err
	}
	if _, err := repairRecordIO(o.fsys, f, path, tailPolicy{}); err != nil {
		return nil, err
	}
	return newAppender(f, path, o)
}

// newRecordIOAppender appends through f, the recordio v2 file at path
// opened as an append destination (path only names the journal). The
// caller must hold f's append lock for as long as it uses the appender and
// must have repaired the file under that lock (repairRecordIOFile). Close
// leaves f open.
func newRecordIOAppender(f appendDest, path string, o RecordIOAppendOptions) (*RecordIOAppender, error) {
	o.fsys = osFS{}
	return newAppender(destFile{f}, path, o)
}

func newAppender(f appendFile, path string, o RecordIOAppendOptions) (*RecordIOAppender, error) {
	size, err := f.Size()
	if err != nil {
		return nil, err
	}
	if size == 0 {
		return nil, fmt.Errorf("%w: %s is empty; create recordio files with recordio.NewWriter", codec.ErrFormat, path)
	}
	tail, err := recordio.NewTail(f, size, recordio.TailOptions{MaxItems: o.MaxItems, MaxBlockBytes: o.MaxBlockBytes})
	if err != nil {
		return nil, err
	}
	a := &RecordIOAppender{fsys: o.fsys, path: path, f: f, o: o, tail: tail, size: size}
	a.trailerOff, a.trailer = tail.Trailer()
	return a, nil
}

// WriteOffset returns where the next Append starts writing: the offset of
// the trailer block it rewrites, or the end of the file when there is none.
func (a *RecordIOAppender) WriteOffset() int64 {
	if a.trailer != nil {
		return a.trailerOff
	}
	return a.size
}

// Append writes items as one or more body blocks (MaxItems+1 items each)
// and returns once they are durable; a file with a trailer gets its trailer
// block written again after them. When Append fails it first puts the file
// back exactly as it was (if even that fails, the journal stays for the
// next repair, and the error says so). After an error the appender is
// unusable; reopen it.
func (a *RecordIOAppender) Append(items ...[]byte) error {
	if err := a.usable(); err != nil {
		return err
	}
	if len(items) == 0 {
		return nil
	}
	blocks, err := a.tail.Encode(items)
	if err != nil {
		a.err = err
		return err
	}
	return a.write(func(at int64) (int64, error) {
		_, err := a.f.WriteAt(blocks, at)
		return int64(len(blocks)), err
	})
}

// errAppenderClosed is returned by an appender used after Close.
var errAppenderClosed = errors.New("index: recordio appender closed")

// usable reports why a cannot append, if it cannot: an earlier append
// failed, or it is closed.
func (a *RecordIOAppender) usable() error {
	if a.err != nil {
		return a.err
	}
	if a.f == nil {
		return errAppenderClosed
	}
	return nil
}

// write appends the blocks emit writes at the given offset (returning
// their length), in place or journaled. If emit fails (an input could not
// be read), the file is put back as it was.
func (a *RecordIOAppender) write(emit func(at int64) (int64, error)) error {
	var err error
	if a.trailer == nil {
		err = a.appendInPlace(emit)
	} else {
		err = a.appendJournaled(emit)
	}
	if err != nil {
		a.err = err
	}
	return err
}

func (a *RecordIOAppender) appendInPlace(emit func(at int64) (int64, error)) error {
	n, err := emit(a.size)
	if err == nil {
		if err = a.f.Sync(); err == nil {
			synced(a.path)
		}
	}
	if err != nil {
		if rerr := a.f.Truncate(a.size); rerr != nil {
			return fmt.Errorf("%w (and cutting the file back failed: %v)", err, rerr)
		}
		if rerr := a.f.Sync(); rerr != nil {
			return fmt.Errorf("%w (and syncing the cut failed: %v)", err, rerr)
		}
		return err
	}
	a.size += n
	return nil
}

func (a *RecordIOAppender) appendJournaled(emit func(at int64) (int64, error)) error {
	jpath := a.path + RecordIOJournalSuffix
	dir := filepath.Dir(a.path)
	jf, err := a.createJournal(jpath)
	if err != nil {
		return err
	}
	err = writeJournal(jf, encodeJournal(a.size, a.trailerOff, a.trailer))
	if err == nil {
		err = a.fsys.SyncDir(dir)
	}
	if err != nil {
		// The file is untouched; the journal is ours and not yet trusted.
		if rerr := a.fsys.Remove(jpath); rerr != nil {
			return fmt.Errorf("%w (and removing the journal failed: %v)", err, rerr)
		}
		return err
	}
	// The journal is durable: the file may now be torn at any byte.
	n, err := emit(a.trailerOff)
	newOff := a.trailerOff + n
	if err == nil {
		_, err = a.f.WriteAt(a.trailer, newOff)
	}
	if err == nil {
		if err = a.f.Sync(); err == nil {
			synced(a.path)
		}
	}
	if err == nil {
		err = a.fsys.Remove(jpath)
	}
	if err != nil {
		if rerr := rollBack(a.f, a.trailerOff, a.trailer); rerr != nil {
			return fmt.Errorf("%w (and rolling back failed, the journal stays for the next repair: %v)", err, rerr)
		}
		if rerr := a.fsys.Remove(jpath); rerr != nil && !errors.Is(rerr, fs.ErrNotExist) {
			return fmt.Errorf("%w (rolled back; removing the journal failed: %v)", err, rerr)
		}
		return err
	}
	// The new state is durable in the file and the journal is gone. Should
	// the removal not reach the disk before a crash, repair finds the
	// journal and keeps the completed append, so the items are in either way.
	_ = a.fsys.SyncDir(dir)
	a.trailerOff = newOff
	a.size = newOff + int64(len(a.trailer))
	return nil
}

// journalAttempts bounds how often an append removes an untrusted entry
// raced in at its journal's name and tries again.
const journalAttempts = 3

// createJournal creates the append's journal at jpath. Something planted
// there since the repair (a symlink, another user's file) is removed
// unread and the creation tried again; a trusted journal is left alone and
// fails the append, with the file untouched.
func (a *RecordIOAppender) createJournal(jpath string) (appendFile, error) {
	for i := 0; ; i++ {
		jf, err := a.fsys.CreateJournal(jpath)
		if err == nil {
			return jf, nil
		}
		if !errors.Is(err, fs.ErrExist) || i+1 >= journalAttempts {
			return nil, fmt.Errorf("index: create journal: %w", err)
		}
		if _, rerr := a.fsys.ReadJournal(jpath, a.f); !errors.Is(rerr, ErrUntrustedJournal) {
			return nil, fmt.Errorf("index: create journal: %w", err)
		}
		if rerr := a.fsys.Remove(jpath); rerr != nil && !errors.Is(rerr, fs.ErrNotExist) {
			return nil, fmt.Errorf("index: create journal: %w (removing what is there: %v)", err, rerr)
		}
	}
}

// writeJournal writes b to the new journal jf, syncs and closes it.
func writeJournal(jf appendFile, b []byte) error {
	_, err := jf.WriteAt(b, 0)
	if err == nil {
		err = jf.Sync()
	}
	if cerr := jf.Close(); err == nil {
		err = cerr
	}
	return err
}

// Close releases the appender. An appender made by OpenRecordIOAppender
// closes its file (which releases the lock); one made by
// newRecordIOAppender leaves the caller's descriptor open. Appends are
// already durable when Append returns.
func (a *RecordIOAppender) Close() error {
	if a.f == nil {
		return nil
	}
	f := a.f
	a.f = nil
	if !a.owned {
		return nil
	}
	return f.Close()
}

// AppendFrom appends items read from streams, each as a block of its own,
// like Append (durable on return, trailer kept, crash safe) but without
// holding an item in memory: see recordio.Tail.WriteStreams; a transformed
// block is compressed into an anonymous temporary file first. If an input
// fails or ends early (codec.ErrShortInput), the file is put back as it
// was.
//
// A transformed block may not decode to more than
// recordio.DefaultMaxBlockSize (readers refuse larger ones): larger items
// fail with codec.ErrLimit before anything is written.
func (a *RecordIOAppender) AppendFrom(items ...recordio.ItemSource) error {
	if err := a.usable(); err != nil {
		return err
	}
	if len(items) == 0 {
		return nil
	}
	if err := a.tail.CheckStreams(items); err != nil {
		return err
	}
	return a.write(func(at int64) (int64, error) {
		return a.tail.WriteStreams(a.f, at, items, spillFile)
	})
}

// spillFile is an anonymous temporary file for one transformed block.
func spillFile() (recordio.Spill, func(), error) {
	tmp, err := os.CreateTemp("", "recfs-block-")
	if err != nil {
		return nil, nil, err
	}
	if err := os.Remove(tmp.Name()); err != nil {
		tmp.Close()
		return nil, nil, err
	}
	return tmp, func() { tmp.Close() }, nil
}
