package objstore_test

import (
	"bytes"
	"context"
	"crypto/rand"
	"errors"
	"fmt"
	"io"
	"net"
	"os"
	"path/filepath"
	"strings"
	"sync/atomic"
	"testing"
	"time"

	"github.com/Azure/azure-sdk-for-go/sdk/storage/azblob/container"
	"github.com/Azure/azure-sdk-for-go/sdk/storage/azblob/sas"

	"github.com/shoal-ml/shoal/internal/teststorage"
	"github.com/shoal-ml/shoal/storage/objstore"
)

// dial is the plain dialer, guarded as the agent guards a job's.
var dial = objstore.GuardDialer((&net.Dialer{Timeout: 10 * time.Second}).DialContext, nil)

func ctx(t *testing.T) context.Context {
	c, cancel := context.WithTimeout(context.Background(), 2*time.Minute)
	t.Cleanup(cancel)
	return c
}

// tree is a folder's files, by slash path.
type tree map[string][]byte

func sample() tree {
	big := make([]byte, 5<<20+123) // over one 4 MiB block
	rand.Read(big)
	return tree{"a.csv": []byte("x,y\n1,2\n"), "sub/b.txt": []byte("bee"), "sub/deep/c.bin": big, "empty": nil}
}

func writeTree(t *testing.T, dir string, files tree) {
	for p, b := range files {
		f := filepath.Join(dir, filepath.FromSlash(p))
		if err := os.MkdirAll(filepath.Dir(f), 0o755); err != nil {
			t.Fatal(err)
		}
		if err := os.WriteFile(f, b, 0o644); err != nil {
			t.Fatal(err)
		}
	}
}

func checkTree(t *testing.T, dir string, want tree) {
	t.Helper()
	got := tree{}
	filepath.WalkDir(dir, func(p string, d os.DirEntry, err error) error {
		if err == nil && !d.IsDir() {
			rel, _ := filepath.Rel(dir, p)
			b, _ := os.ReadFile(p)
			got[filepath.ToSlash(rel)] = b
		}
		return nil
	})
	if len(got) != len(want) {
		t.Fatalf("got %d files %v, want %d", len(got), keys(got), len(want))
	}
	for p, b := range want {
		if !bytes.Equal(got[p], b) {
			t.Fatalf("%s: got %d bytes, want %d", p, len(got[p]), len(b))
		}
	}
}

func keys(m tree) []string {
	var ks []string
	for k := range m {
		ks = append(ks, k)
	}
	return ks
}

// roundTrip uploads a folder to src under prefix, downloads it back, and
// checks the bytes and the progress reports.
func roundTrip(t *testing.T, src objstore.Source, prefix string) {
	t.Helper()
	files := sample()
	up := t.TempDir()
	writeTree(t, up, files)
	// With progress, Upload streams through a counting reader, which
	// cannot seek: the clients must send it as it comes.
	var sent atomic.Int64
	if err := objstore.Upload(ctx(t), src, prefix, up, func(d, _ int64) { sent.Store(d) }); err != nil {
		t.Fatalf("upload: %v", err)
	}
	if sent.Load() != 5<<20+123+8+3 {
		t.Fatalf("upload progress %d", sent.Load())
	}
	objs, err := src.List(ctx(t), prefix)
	if err != nil || len(objs) != len(files) {
		t.Fatalf("list %q: %v %v", prefix, objs, err)
	}
	down := t.TempDir()
	var last, total atomic.Int64
	err = objstore.Download(ctx(t), src, strings.TrimSuffix(prefix, "/"), down, func(d, tot int64) { last.Store(d); total.Store(tot) })
	if err != nil {
		t.Fatalf("download: %v", err)
	}
	checkTree(t, down, files)
	if want := int64(5<<20 + 123 + 8 + 3); last.Load() != want || total.Load() != want {
		t.Fatalf("progress %d/%d, want %d/%d", last.Load(), total.Load(), want, want)
	}
	// A prefix that names one object downloads that file alone.
	one := t.TempDir()
	if err := objstore.Download(ctx(t), src, prefix+"sub/b.txt", one, nil); err != nil {
		t.Fatalf("download one file: %v", err)
	}
	checkTree(t, one, tree{"b.txt": []byte("bee")})
	// Nothing under a prefix is not found.
	err = objstore.Download(ctx(t), src, prefix+"nothing-here", t.TempDir(), nil)
	if !errors.Is(err, objstore.ErrNotFound) {
		t.Fatalf("empty prefix: %v, want ErrNotFound", err)
	}
	_, _, err = src.Open(ctx(t), prefix+"missing.csv")
	if !errors.Is(err, objstore.ErrNotFound) {
		t.Fatalf("open missing: %v, want ErrNotFound", err)
	}
}

func TestAzureBlob(t *testing.T) {
	az := teststorage.StartAzurite(t)
	cred, err := container.NewSharedKeyCredential(az.Account, az.Key)
	if err != nil {
		t.Fatal(err)
	}
	admin, err := container.NewClientWithSharedKeyCredential(az.ServiceURL+"/data", cred, nil)
	if err != nil {
		t.Fatal(err)
	}
	if _, err := admin.Create(ctx(t), nil); err != nil {
		t.Fatal(err)
	}
	keyed := func(key string) objstore.Source {
		s, err := objstore.NewAzureBlob(objstore.AzureBlobConfig{ServiceURL: az.ServiceURL, Container: "data", AccountName: az.Account, AccountKey: key, Dial: dial})
		if err != nil {
			t.Fatal(err)
		}
		return s
	}
	t.Run("account key", func(t *testing.T) { roundTrip(t, keyed(az.Key), "folder/") })
	t.Run("probe", func(t *testing.T) {
		probes(t, keyed(az.Key), keyed("d3Jvbmcga2V5IGZvciB0aGUgZGV2IGFjY291bnQ="), "folder/")
	})

	t.Run("wrong account key is denied with Azure's words", func(t *testing.T) {
		wrong := keyed("d3Jvbmcga2V5IGZvciB0aGUgZGV2IGFjY291bnQ=")
		_, err := wrong.List(ctx(t), "")
		if !errors.Is(err, objstore.ErrDenied) || !strings.Contains(err.Error(), "403") || !strings.Contains(err.Error(), "AuthorizationFailure") && !strings.Contains(err.Error(), "AuthenticationFailed") {
			t.Fatalf("wrong key: %v, want ErrDenied with HTTP 403 and Azure's code", err)
		}
	})

	t.Run("sas token", func(t *testing.T) {
		qp, err := sas.BlobSignatureValues{
			Protocol: sas.ProtocolHTTPSandHTTP, ExpiryTime: time.Now().Add(time.Hour), ContainerName: "data",
			Permissions: (&sas.ContainerPermissions{Read: true, List: true, Write: true, Create: true}).String(),
		}.SignWithSharedKey(cred)
		if err != nil {
			t.Fatal(err)
		}
		token := qp.Encode()
		s, err := objstore.NewAzureBlob(objstore.AzureBlobConfig{ServiceURL: az.ServiceURL, Container: "data", SASToken: token, Dial: dial})
		if err != nil {
			t.Fatal(err)
		}
		roundTrip(t, s, "sas/")

		// A tampered signature is denied; the token is in no message.
		bad := strings.Replace(token, "sig=", "sig=AAAA", 1)
		s, _ = objstore.NewAzureBlob(objstore.AzureBlobConfig{ServiceURL: az.ServiceURL, Container: "data", SASToken: bad, Dial: dial})
		_, err = s.List(ctx(t), "")
		if !errors.Is(err, objstore.ErrDenied) || strings.Contains(err.Error(), "sig=") {
			t.Fatalf("tampered SAS: %v, want ErrDenied without the token", err)
		}
		// Unreachable: the message names the failure, not the token.
		s, _ = objstore.NewAzureBlob(objstore.AzureBlobConfig{ServiceURL: "http://" + closedAddr(t) + "/devstoreaccount1", Container: "data", SASToken: token, Dial: dial})
		_, err = s.List(ctx(t), "")
		if !errors.Is(err, objstore.ErrUnreachable) || strings.Contains(err.Error(), "sig=") || strings.Contains(err.Error(), qp.Signature()) {
			t.Fatalf("unreachable with SAS: %v, want ErrUnreachable without the token", err)
		}
	})

	t.Run("anonymous", func(t *testing.T) {
		pub, _ := container.NewClientWithSharedKeyCredential(az.ServiceURL+"/public", cred, nil)
		access := container.PublicAccessTypeContainer
		if _, err := pub.Create(ctx(t), &container.CreateOptions{Access: &access}); err != nil {
			t.Fatal(err)
		}
		if _, err := pub.NewBlockBlobClient("iris.csv").UploadBuffer(ctx(t), []byte("sepal\n1\n"), nil); err != nil {
			t.Fatal(err)
		}
		anon, _ := objstore.NewAzureBlob(objstore.AzureBlobConfig{ServiceURL: az.ServiceURL, Container: "public", Dial: dial})
		dir := t.TempDir()
		if err := objstore.Download(ctx(t), anon, "iris.csv", dir, nil); err != nil {
			t.Fatal(err)
		}
		checkTree(t, dir, tree{"iris.csv": []byte("sepal\n1\n")})
		// The private container refuses anonymous reads.
		priv, _ := objstore.NewAzureBlob(objstore.AzureBlobConfig{ServiceURL: az.ServiceURL, Container: "data", Dial: dial})
		if _, err := priv.List(ctx(t), ""); !errors.Is(err, objstore.ErrDenied) && !errors.Is(err, objstore.ErrNotFound) {
			t.Fatalf("anonymous on a private container: %v, want denied", err)
		}
	})

	t.Run("missing container", func(t *testing.T) {
		s, _ := objstore.NewAzureBlob(objstore.AzureBlobConfig{ServiceURL: az.ServiceURL, Container: "nosuch", AccountName: az.Account, AccountKey: az.Key, Dial: dial})
		_, err := s.List(ctx(t), "")
		if !errors.Is(err, objstore.ErrNotFound) || !strings.Contains(err.Error(), "ContainerNotFound") {
			t.Fatalf("missing container: %v, want ErrNotFound with ContainerNotFound", err)
		}
	})

	t.Run("service principal is refused clearly", func(t *testing.T) {
		_, err := objstore.NewAzureBlob(objstore.AzureBlobConfig{ServiceURL: az.ServiceURL, Container: "data", TenantID: "t", ClientID: "c", ClientSecret: "s", Dial: dial})
		if !errors.Is(err, objstore.ErrUnsupported) || !strings.Contains(err.Error(), "service principal") {
			t.Fatalf("service principal: %v", err)
		}
	})
}

func TestAzureServiceURL(t *testing.T) {
	for _, c := range []struct{ account, endpoint, protocol, want string }{
		{"acct", "", "", "https://acct.blob.core.windows.net"},
		{"acct", "core.chinacloudapi.cn", "wasbs", "https://acct.blob.core.chinacloudapi.cn"},
		{"acct", "", "http", "http://acct.blob.core.windows.net"},
		{"x", "http://10.1.2.3:10000/devstoreaccount1/", "", "http://10.1.2.3:10000/devstoreaccount1"},
	} {
		got, err := objstore.AzureServiceURL(c.account, c.endpoint, c.protocol)
		if err != nil || got != c.want {
			t.Errorf("%v: %q %v, want %q", c, got, err, c.want)
		}
	}
	for _, c := range [][3]string{{"", "", ""}, {"a", "", "ftp"}, {"a", "file:///etc", ""}} {
		if _, err := objstore.AzureServiceURL(c[0], c[1], c[2]); err == nil {
			t.Errorf("%v: accepted", c)
		}
	}
}

func TestS3(t *testing.T) {
	srv := teststorage.StartS3(t)
	srv.Bucket(t, "bucket")
	s, err := objstore.NewS3(objstore.S3Config{EndpointURL: srv.EndpointURL, Bucket: "bucket", AccessKeyID: srv.AccessKey, SecretAccessKey: srv.SecretKey, Dial: dial})
	if err != nil {
		t.Fatal(err)
	}
	t.Run("keys", func(t *testing.T) { roundTrip(t, s, "train/") })
	t.Run("probe", func(t *testing.T) {
		bad, _ := objstore.NewS3(objstore.S3Config{EndpointURL: srv.EndpointURL, Bucket: "bucket", AccessKeyID: srv.AccessKey, SecretAccessKey: "wrong", Dial: dial})
		probes(t, s, bad, "train/")
	})

	t.Run("wrong secret is denied with the server's words", func(t *testing.T) {
		bad, _ := objstore.NewS3(objstore.S3Config{EndpointURL: srv.EndpointURL, Bucket: "bucket", AccessKeyID: srv.AccessKey, SecretAccessKey: "wrong", Dial: dial})
		_, err := bad.List(ctx(t), "")
		if !errors.Is(err, objstore.ErrDenied) || !strings.Contains(err.Error(), "403") || !strings.Contains(err.Error(), "SignatureDoesNotMatch") {
			t.Fatalf("wrong secret: %v, want ErrDenied, 403 SignatureDoesNotMatch", err)
		}
		if strings.Contains(err.Error(), "wrong") {
			t.Fatalf("the secret is in the message: %v", err)
		}
	})
	t.Run("no server answering says why, not HTTP 0", func(t *testing.T) {
		l, err := net.Listen("tcp", strings.TrimPrefix(srv.EndpointURL, "http://")[:strings.LastIndex(strings.TrimPrefix(srv.EndpointURL, "http://"), ":")]+":0")
		if err != nil {
			t.Fatal(err)
		}
		addr := l.Addr().String()
		l.Close() // nothing listens there now
		gone, _ := objstore.NewS3(objstore.S3Config{EndpointURL: "http://" + addr, Bucket: "bucket", AccessKeyID: srv.AccessKey, SecretAccessKey: srv.SecretKey, Dial: dial})
		_, err = gone.List(ctx(t), "")
		if err == nil || strings.Contains(err.Error(), "HTTP 0") || !strings.Contains(err.Error(), "refused") {
			t.Fatalf("a closed port: %v, want the connection's refusal", err)
		}
	})
	t.Run("anonymous on a private bucket is denied", func(t *testing.T) {
		anon, _ := objstore.NewS3(objstore.S3Config{EndpointURL: srv.EndpointURL, Bucket: "bucket", Dial: dial})
		if _, err := anon.List(ctx(t), ""); !errors.Is(err, objstore.ErrDenied) {
			t.Fatalf("anonymous: %v, want ErrDenied", err)
		}
	})
	t.Run("missing bucket", func(t *testing.T) {
		nb, _ := objstore.NewS3(objstore.S3Config{EndpointURL: srv.EndpointURL, Bucket: "nosuch", AccessKeyID: srv.AccessKey, SecretAccessKey: srv.SecretKey, Dial: dial})
		if _, err := nb.List(ctx(t), ""); !errors.Is(err, objstore.ErrNotFound) || !strings.Contains(err.Error(), "NoSuchBucket") {
			t.Fatalf("missing bucket: %v, want ErrNotFound NoSuchBucket", err)
		}
	})
}

func TestHTTP(t *testing.T) {
	h := teststorage.StartHTTP(t, map[string][]byte{"/data/iris.csv": []byte("a,b\n")})
	s, err := objstore.NewHTTP(h.URL+"/data/iris.csv", true, dial)
	if err != nil {
		t.Fatal(err)
	}
	dir := t.TempDir()
	if err := objstore.Download(ctx(t), s, "", dir, nil); err != nil {
		t.Fatal(err)
	}
	checkTree(t, dir, tree{"iris.csv": []byte("a,b\n")})
	if _, err := s.List(ctx(t), "data/"); !errors.Is(err, objstore.ErrUnsupported) {
		t.Fatalf("listing a folder over http: %v, want ErrUnsupported", err)
	}
	if err := s.Put(ctx(t), "iris.csv", strings.NewReader("x"), 1); !errors.Is(err, objstore.ErrUnsupported) {
		t.Fatalf("put over http: %v", err)
	}
	if _, err := objstore.NewHTTP(h.URL+"/data/", true, dial); !errors.Is(err, objstore.ErrUnsupported) {
		t.Fatalf("a folder URL: %v, want ErrUnsupported", err)
	}
	if _, err := objstore.NewHTTP(h.URL+"/data/iris.csv", false, dial); !errors.Is(err, objstore.ErrUnsupported) {
		t.Fatalf("plain http without the datastore's leave: %v", err)
	}
	missing, _ := objstore.NewHTTP(h.URL+"/data/missing.csv", true, dial)
	err = objstore.Download(ctx(t), missing, "", t.TempDir(), nil)
	if !errors.Is(err, objstore.ErrNotFound) || !strings.Contains(err.Error(), "404") {
		t.Fatalf("missing URL: %v, want ErrNotFound with 404", err)
	}
	gone, _ := objstore.NewHTTP("http://"+closedAddr(t)+"/x.csv", true, dial)
	if _, err := gone.List(ctx(t), ""); !errors.Is(err, objstore.ErrUnreachable) || !strings.Contains(err.Error(), "refused") {
		t.Fatalf("closed port: %v, want ErrUnreachable, connection refused", err)
	}
}

// closedAddr is host:port on the host's address where nothing listens.
func closedAddr(t *testing.T) string {
	ip := teststorage.RequireHostIP(t)
	l, err := net.Listen("tcp", net.JoinHostPort(ip, "0"))
	if err != nil {
		t.Fatal(err)
	}
	addr := l.Addr().String()
	l.Close()
	return addr
}

func TestLocal(t *testing.T) {
	base := t.TempDir()
	root := filepath.Join(base, "ds")
	writeTree(t, root, tree{"x/a.txt": []byte("a"), "b.txt": []byte("b")})
	os.WriteFile(filepath.Join(base, "secret"), []byte("server's"), 0o600)
	s, err := objstore.NewLocal(root)
	if err != nil {
		t.Fatal(err)
	}
	roundTrip(t, s, "up/")

	for _, key := range []string{"../secret", "/etc/passwd", "x/../../secret", "x\\..\\..\\secret", "a\x00b"} {
		if _, _, err := s.Open(ctx(t), key); err == nil || !strings.Contains(err.Error(), "relative path") {
			t.Errorf("open %q: %v, want refused", key, err)
		}
		if err := s.Put(ctx(t), key, strings.NewReader("x"), 1); err == nil {
			t.Errorf("put %q: accepted", key)
		}
	}
	if _, err := s.List(ctx(t), "../"); err == nil {
		t.Errorf("list ../: accepted")
	}
	// A link that leaves the datastore's path is refused, not followed.
	if err := os.Symlink("../secret", filepath.Join(root, "x", "link")); err != nil {
		t.Fatal(err)
	}
	if _, _, err := s.Open(ctx(t), "x/link"); err == nil {
		t.Fatalf("open of a link out: accepted")
	}
	if _, err := s.List(ctx(t), "x/"); !errors.Is(err, objstore.ErrDenied) {
		t.Fatalf("list with a link out: %v, want ErrDenied", err)
	}
	if _, err := objstore.NewLocal(filepath.Join(base, "nosuch")); !errors.Is(err, objstore.ErrNotFound) {
		t.Fatalf("missing path: %v", err)
	}
}

// A key from a hostile listing cannot make Download write outside its
// folder, and Upload does not follow a job's link out of its output.
func TestTransferConfinement(t *testing.T) {
	dst := t.TempDir()
	for _, key := range []string{"p/../../escape", "p//abs", "p/a\\..\\b"} {
		src := fakeListing{objs: []objstore.Object{{Key: key, Size: 1}}}
		err := objstore.Download(ctx(t), src, "p", dst, nil)
		if err == nil || !strings.Contains(err.Error(), "relative path") {
			t.Errorf("key %q: %v, want refused", key, err)
		}
	}
	// An object that is not the size its listing said (changed while
	// read, or cut short) fails: a cache entry holds what its key says.
	short := fakeListing{objs: []objstore.Object{{Key: "p/a", Size: 5}}}
	if err := objstore.Download(ctx(t), short, "p", t.TempDir(), nil); err == nil || !strings.Contains(err.Error(), "the listing said 5") {
		t.Errorf("short object: %v", err)
	}
	if _, err := os.Stat(filepath.Join(filepath.Dir(dst), "escape")); err == nil {
		t.Fatal("a file was written outside the folder")
	}

	out := t.TempDir()
	secret := filepath.Join(t.TempDir(), "shadow")
	os.WriteFile(secret, []byte("root's"), 0o600)
	os.Symlink(secret, filepath.Join(out, "leak"))
	store, _ := objstore.NewLocal(t.TempDir())
	err := objstore.Upload(ctx(t), store, "o/", out, nil)
	if err == nil || !strings.Contains(err.Error(), "leak") {
		t.Fatalf("upload with a link out: %v, want refused naming it", err)
	}
	if objs, _ := store.List(ctx(t), ""); len(objs) != 0 {
		t.Fatalf("uploaded %v", objs)
	}
}

// fakeListing is a Source whose listing is whatever the test says: it
// stands for a hostile or broken storage server, which no real server
// here would imitate (they refuse such keys on write).
type fakeListing struct{ objs []objstore.Object }

func (f fakeListing) List(context.Context, string) ([]objstore.Object, error) { return f.objs, nil }
func (f fakeListing) Open(context.Context, string) (io.ReadCloser, int64, error) {
	return io.NopCloser(strings.NewReader("x")), 1, nil
}
func (f fakeListing) Put(context.Context, string, io.Reader, int64) error {
	return fmt.Errorf("read-only")
}

// probes checks a Prober against a real server after roundTrip filled
// prefix: it finds the prefix, says ErrNotFound for an empty one and
// ErrDenied for a wrong credential.
func probes(t *testing.T, good, wrong objstore.Source, prefix string) {
	t.Helper()
	p, ok := good.(objstore.Prober)
	if !ok {
		t.Fatalf("%T is no Prober", good)
	}
	if err := p.Probe(ctx(t), prefix); err != nil {
		t.Errorf("probe of a filled prefix: %v", err)
	}
	if err := p.Probe(ctx(t), "nothing-here/"); !errors.Is(err, objstore.ErrNotFound) {
		t.Errorf("probe of an empty prefix: %v, want ErrNotFound", err)
	}
	if err := wrong.(objstore.Prober).Probe(ctx(t), prefix); !errors.Is(err, objstore.ErrDenied) {
		t.Errorf("probe with a wrong credential: %v, want ErrDenied", err)
	}
}
