package index

import (
	"crypto/hmac"
	"crypto/rand"
	"crypto/sha256"
	"encoding/hex"
	"errors"
	"hash"
	"io"
	"os"
	"sync"

	"golang.org/x/sys/unix"
)

// Tables this user's recfs made. A saved table is a claim (proof.go), and
// for most formats the proof of a claim is a scan at the speed of the
// file's bytes. For a compressed TFRecord file it is a decompression of
// the whole file: every window a checkpoint holds is the output of the
// stream before it, which nothing short of decompressing that stream
// proves, and an attacker who writes a table chooses the windows and the
// unit checksums, and through the windows the bytes a resumed span copies
// (enough of them to make a forged record's CRC-32C right: the checksum is
// linear). Paying that pass in every process makes a saved index worth
// little, so a table of a format a seal can vouch for (voucher) that this
// user's recfs built, or proved, is sealed when it is saved (other
// formats' tables are saved and loaded unsealed: their proof is a scan
// anyway): an HMAC-SHA256 of the file under a key kept in the cache
// directory (keyFile: 32 random bytes, 0600, in a directory no one else
// may write to, see cache_file.go). A published table (made by anyone,
// imported into the cache) or a file copied in carries no seal this key
// makes, and is proven as before; a sealed one is believed for what only
// a pass could prove (vouched), and its spans are still checked, as they
// are read, against the unit checksums it holds (a source changed under
// the same identity gives EIO, never other bytes).

// keyFile is the name of the sealing key in a cache directory, keySize
// its length; sealSize is the length of a seal.
const (
	keyFile  = "recfs.key"
	keySize  = 32
	sealSize = sha256.Size
)

// cacheKeys holds the sealing key of each cache directory used.
var cacheKeys sync.Map // string (as given to cacheKey) -> []byte

// cacheKey returns the sealing key of the cache directory dir (its
// per-user subdirectory when dir is shared), making one when create is set
// and there is none; nil when there is no usable key.
func cacheKey(dir string, create bool) []byte {
	if k, ok := cacheKeys.Load(dir); ok {
		return k.([]byte)
	}
	d, err := openCacheDir(dir, create)
	if err != nil {
		return nil
	}
	defer d.Close()
	key, err := readKey(int(d.Fd()))
	if errors.Is(err, unix.ENOENT) && create {
		key, err = makeKey(int(d.Fd()))
	}
	if err != nil {
		return nil
	}
	k, _ := cacheKeys.LoadOrStore(dir, key)
	return k.([]byte)
}

// errBadKey refuses a key file that is not a private regular file of
// keySize bytes of this user.
var errBadKey = errors.New("index: unusable sealing key")

// readKey reads the key in the directory dfd.
func readKey(dfd int) ([]byte, error) {
	fd, err := unix.Openat(dfd, keyFile, unix.O_RDONLY|unix.O_NOFOLLOW|unix.O_NONBLOCK|unix.O_NOCTTY|unix.O_CLOEXEC, 0)
	if err != nil {
		return nil, err
	}
	f := os.NewFile(uintptr(fd), keyFile)
	defer f.Close()
	var st unix.Stat_t
	if err := unix.Fstat(fd, &st); err != nil {
		return nil, err
	}
	if st.Mode&unix.S_IFMT != unix.S_IFREG || int(st.Uid) != os.Geteuid() || st.Mode&0o077 != 0 || st.Size != keySize {
		return nil, errBadKey
	}
	key := make([]byte, keySize)
	if _, err := io.ReadFull(f, key); err != nil {
		return nil, err
	}
	return key, nil
}

// makeKey writes a new random key into the directory dfd (to a private
// temporary file linked into place, so that of two processes making one
// at once both end with the one that got there first) and returns the key
// in place.
func makeKey(dfd int) ([]byte, error) {
	var rnd [keySize + 8]byte
	if _, err := rand.Read(rnd[:]); err != nil {
		return nil, err
	}
	tmp := ".key-" + hex.EncodeToString(rnd[keySize:])
	fd, err := unix.Openat(dfd, tmp, unix.O_WRONLY|unix.O_CREAT|unix.O_EXCL|unix.O_NOFOLLOW|unix.O_CLOEXEC, 0o600)
	if err != nil {
		return nil, err
	}
	f := os.NewFile(uintptr(fd), tmp)
	_, err = f.Write(rnd[:keySize])
	if cerr := f.Close(); err == nil {
		err = cerr
	}
	if err == nil {
		err = unix.Linkat(dfd, tmp, dfd, keyFile, 0)
	}
	_ = unix.Unlinkat(dfd, tmp, 0)
	if err != nil && !errors.Is(err, unix.EEXIST) {
		return nil, err
	}
	return readKey(dfd)
}

// sealer returns the MAC that seals a cache file under key (nil for no
// key).
func sealer(key []byte) hash.Hash {
	if key == nil {
		return nil
	}
	return hmac.New(sha256.New, key)
}

// voucher is a table that a seal can vouch for: one whose proof would
// otherwise cost a pass over the whole source (see above).
type voucher interface {
	// vouch marks the table as made by this user's recfs.
	vouch()
	// vouched reports whether it is.
	vouched() bool
}

// wholeProver is a voucher whose proof is one pass over the whole source,
// done at the first proof.
type wholeProver interface {
	voucher
	// provenWhole reports whether that pass found the table true
	// throughout.
	provenWhole() bool
}

// reseal saves s again, sealed, once its proof's pass found it true
// throughout (a table published by another machine, or saved unsealed):
// the next process then uses it without a pass. A failure to save costs
// only speed next time.
func (t *Table) reseal(s *snapshot) {
	w, ok := s.tab.(wholeProver)
	if !ok || !w.provenWhole() || t.cf == "" {
		return
	}
	c := *s // saveCache notes the file in its snapshot: not in the shared one
	_ = saveCache(t.lifetime(), t.cf, &c, t.opt)
}
