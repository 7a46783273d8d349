package serve

import (
	"bufio"
	"crypto/sha1"
	"crypto/sha256"
	"crypto/subtle"
	"encoding/base64"
	"errors"
	"fmt"
	"io"
	"os"
	"strings"
	"sync"

	"golang.org/x/crypto/bcrypt"
)

// Credentials checks the user names and passwords of HTTP basic
// authentication. A nil *Credentials lets everyone in.
//
// A password is checked against its stored form once; a password that
// passed is remembered per user (as a SHA-256 digest), so that bcrypt's
// deliberate slowness is paid once per user and not on every request.
type Credentials struct {
	users map[string]secret

	mu   sync.Mutex
	good map[string][sha256.Size]byte // user → digest of the password last accepted
}

// secret is one user's stored password.
type secret struct {
	kind string // "plain" (a digest), "bcrypt", "md5crypt", "sha"
	val  []byte // the digest, the bcrypt hash, the whole md5-crypt string, or the SHA-1 sum
}

// ErrCredentials is wrapped by the errors of reading credentials.
var ErrCredentials = errors.New("serve: credentials")

// maxHtpasswd bounds the size of an htpasswd file.
const maxHtpasswd = 4 << 20

// NewCredentials returns the credentials of one user with a plain
// password, as --user and --pass give them.
func NewCredentials(user, pass string) (*Credentials, error) {
	if user == "" || strings.Contains(user, ":") {
		return nil, fmt.Errorf("%w: user name %q: want a non-empty name without ':'", ErrCredentials, user)
	}
	if pass == "" {
		return nil, fmt.Errorf("%w: user %s has an empty password", ErrCredentials, user)
	}
	d := sha256.Sum256([]byte(pass))
	return &Credentials{users: map[string]secret{user: {kind: "plain", val: d[:]}}}, nil
}

// LoadHtpasswd reads the credentials of an htpasswd file (see
// [ParseHtpasswd]).
func LoadHtpasswd(path string) (*Credentials, error) {
	f, err := os.Open(path)
	if err != nil {
		return nil, fmt.Errorf("%w: %w", ErrCredentials, err)
	}
	defer f.Close()
	c, err := ParseHtpasswd(io.LimitReader(f, maxHtpasswd+1))
	if err != nil {
		return nil, fmt.Errorf("%s: %w", path, err)
	}
	return c, nil
}

// ParseHtpasswd reads "user:hash" lines as Apache's htpasswd writes them:
// bcrypt ($2y$, htpasswd -B), MD5-crypt ($apr1$, htpasswd's default, and
// $1$) and SHA-1 ({SHA}, htpasswd -s). Blank lines and lines starting with
// # are skipped. Plain-text passwords and other hashes are refused with
// the line's number.
func ParseHtpasswd(r io.Reader) (*Credentials, error) {
	c := &Credentials{users: map[string]secret{}}
	sc := bufio.NewScanner(r)
	sc.Buffer(make([]byte, 4096), 64<<10)
	size, line := 0, 0
	for sc.Scan() {
		line++
		size += len(sc.Bytes()) + 1
		if size > maxHtpasswd {
			return nil, fmt.Errorf("%w: larger than %d bytes", ErrCredentials, maxHtpasswd)
		}
		text := strings.TrimSpace(sc.Text())
		if text == "" || strings.HasPrefix(text, "#") {
			continue
		}
		user, hash, ok := strings.Cut(text, ":")
		if !ok || user == "" {
			return nil, fmt.Errorf("%w: line %d: want user:hash", ErrCredentials, line)
		}
		s, err := parseHash(hash)
		if err != nil {
			return nil, fmt.Errorf("%w: line %d (user %s): %w", ErrCredentials, line, user, err)
		}
		c.users[user] = s
	}
	if err := sc.Err(); err != nil {
		return nil, fmt.Errorf("%w: %w", ErrCredentials, err)
	}
	if len(c.users) == 0 {
		return nil, fmt.Errorf("%w: no users", ErrCredentials)
	}
	return c, nil
}

// parseHash classifies the stored form of a password.
func parseHash(h string) (secret, error) {
	switch {
	case strings.HasPrefix(h, "$2a$"), strings.HasPrefix(h, "$2b$"), strings.HasPrefix(h, "$2y$"):
		if _, err := bcrypt.Cost([]byte(h)); err != nil {
			return secret{}, fmt.Errorf("bcrypt hash: %w", err)
		}
		return secret{kind: "bcrypt", val: []byte(h)}, nil
	case strings.HasPrefix(h, apr1Magic), strings.HasPrefix(h, md5Magic):
		if strings.Count(h, "$") != 3 {
			return secret{}, errors.New("malformed MD5-crypt hash")
		}
		return secret{kind: "md5crypt", val: []byte(h)}, nil
	case strings.HasPrefix(h, "{SHA}"):
		sum, err := base64.StdEncoding.DecodeString(h[len("{SHA}"):])
		if err != nil || len(sum) != sha1.Size {
			return secret{}, errors.New("malformed {SHA} hash")
		}
		return secret{kind: "sha", val: sum}, nil
	}
	return secret{}, errors.New("unsupported hash (use htpasswd -B, -m or -s; plain text is refused)")
}

// Check reports whether pass is user's password.
func (c *Credentials) Check(user, pass string) bool {
	if c == nil {
		return true
	}
	d := sha256.Sum256([]byte(pass))
	c.mu.Lock()
	good, ok := c.good[user]
	c.mu.Unlock()
	if ok && subtle.ConstantTimeCompare(good[:], d[:]) == 1 {
		return true
	}
	s, known := c.users[user]
	if !known {
		// Take about as long as a known user's plain check.
		subtle.ConstantTimeCompare(d[:], d[:])
		return false
	}
	if !s.matches(pass, d) {
		return false
	}
	c.mu.Lock()
	if c.good == nil {
		c.good = map[string][sha256.Size]byte{}
	}
	c.good[user] = d // one entry per configured user: bounded
	c.mu.Unlock()
	return true
}

// matches checks pass (whose SHA-256 digest is d) against s.
func (s secret) matches(pass string, d [sha256.Size]byte) bool {
	switch s.kind {
	case "plain":
		return subtle.ConstantTimeCompare(s.val, d[:]) == 1
	case "bcrypt":
		return bcrypt.CompareHashAndPassword(s.val, []byte(pass)) == nil
	case "md5crypt":
		magic := apr1Magic
		if strings.HasPrefix(string(s.val), md5Magic) {
			magic = md5Magic
		}
		salt := strings.TrimPrefix(string(s.val), magic)
		salt, _, _ = strings.Cut(salt, "$")
		got := md5Crypt([]byte(pass), []byte(salt), magic)
		return subtle.ConstantTimeCompare([]byte(got), s.val) == 1
	case "sha":
		sum := sha1.Sum([]byte(pass))
		return subtle.ConstantTimeCompare(sum[:], s.val) == 1
	}
	return false
}
