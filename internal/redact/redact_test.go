package redact

import (
	"strings"
	"testing"
)

// Every credential form, as a line: each must lose SECRET and keep the
// rest as written.
func TestLine(t *testing.T) {
	for _, c := range []struct{ name, in, want string }{
		{"DSN after sh -c", `/bin/sh -c 'exec etcd --listen {client_port}' x postgres://u:SECRET@h/db`,
			`/bin/sh -c 'exec etcd --listen {client_port}' x postgres://u:REDACTED@h/db`},
		{"quoted DSN", `server --dsn "postgres://admin:SECRET@db:5432/x?sslmode=disable"`,
			`server --dsn 'postgres://admin:REDACTED@db:5432/x?sslmode=disable'`},
		{"password with @ and /", `server postgres://u:p@SECRET/x@h/db`, `server postgres://u:REDACTED@h/db`},
		{"mysql DSN", `kine --endpoint 'mysql://root:SECRET@tcp(127.0.0.1:3306)/kine'`,
			`kine --endpoint 'mysql://root:REDACTED@tcp(127.0.0.1:3306)/kine'`},
		{"libpq keywords", `server --dsn "host=h password=SECRET dbname=d"`, `server --dsn 'host=h password=REDACTED dbname=d'`},
		{"quoted libpq password", `server --dsn "host=h password='SEC RET' dbname=d"`, `server --dsn 'host=h password=REDACTED dbname=d'`},
		{"URL query token", `server --url 'https://h/x?access_token=SECRET&y=1'`, `server --url 'https://h/x?access_token=REDACTED&y=1'`},
		{"--password X", `server --password SECRET --port {client_port}`, `server --password REDACTED --port {client_port}`},
		{"--password=X", `server --password=SECRET`, `server --password=REDACTED`},
		{"-token X", `server -token SECRET`, `server -token REDACTED`},
		{"--client-secret X", `server --client-secret "SECRET"`, `server --client-secret REDACTED`},
		{"--api-key=X", `server --api-key=SECRET`, `server --api-key=REDACTED`},
		{"--user name:X", `etcdctl --user root:SECRET get x`, `etcdctl --user root:REDACTED get x`},
		{"--user=name:X", `etcdctl --user=root:SECRET get x`, `etcdctl --user=root:REDACTED get x`},
		{"env assignment", `ETCDCTL_PASSWORD=SECRET server`, `ETCDCTL_PASSWORD=REDACTED server`},
		{"env word", `env ETCDCTL_PASSWORD='SECRET' server`, `env ETCDCTL_PASSWORD=REDACTED server`},
		{"script with a flag", `sh -c 'exec server --token SECRET'`, `sh -c 'exec server --token REDACTED'`},
		{"with an expansion", `server --dsn "postgres://u:SECRET@$HOST/db"`, `server --dsn "postgres://u:REDACTED@$HOST/db"`},
		{"unparseable", `server 'postgres://u:SECRET@h/db`, `server 'postgres://u:REDACTED@h/db`},
		{"unparseable flag", `server "--password SECRET`, `server "--password REDACTED`},
		{"a repro of --command", `vigil conform --fixture command --command '/bin/sh -c '\''exec etcd'\'' x postgres://u:SECRET@h/db' --repro kv/put`,
			`vigil conform --fixture command --command '/bin/sh -c '\''exec etcd'\'' x postgres://u:REDACTED@h/db' --repro kv/put`},
	} {
		t.Run(c.name, func(t *testing.T) {
			got := Line(c.in)
			if strings.Contains(got, "SECRET") || strings.Contains(got, "SEC RET") {
				t.Errorf("Line(%s) = %s: the secret is left", c.in, got)
			}
			if got != c.want {
				t.Errorf("Line(%s)\n got %s\nwant %s", c.in, got, c.want)
			}
			if again := Line(got); again != got {
				t.Errorf("not stable: Line(%s) = %s", got, again)
			}
		})
	}
}

// A line without a credential comes back byte for byte: the record keeps
// what the user wrote.
func TestLineWithoutCredentials(t *testing.T) {
	for _, in := range []string{
		`/usr/bin/etcd --data-dir {data_dir} --listen-client-urls http://127.0.0.1:{client_port}  --advertise-client-urls http://127.0.0.1:{client_port}`,
		`/bin/sh -c "exec x \"a b\"" argv0 'it'\''s' a\ b`,
		`server --dsn postgres://postgres@h/db --user root`,
		`server $HOME/x ~/y`,
		``,
	} {
		if got := Line(in); got != in {
			t.Errorf("Line(%s) = %s", in, got)
		}
	}
}

func TestFlags(t *testing.T) {
	got := Flags(map[string]string{"password": "SECRET", "token": "SECRET", "user": "root:SECRET", "members": "3",
		"endpoints": "https://root:SECRET@127.0.0.1:2379", "command": "/bin/sh -c 'exec x' x postgres://u:SECRET@h/db",
		"faults": "kill-leader,pause-follower"})
	want := map[string]string{"password": Mark, "token": Mark, "user": "root:" + Mark, "members": "3",
		"endpoints": "https://root:" + Mark + "@127.0.0.1:2379", "command": "/bin/sh -c 'exec x' x postgres://u:" + Mark + "@h/db",
		"faults": "kill-leader,pause-follower"}
	for k, v := range want {
		if got[k] != v {
			t.Errorf("%s = %q, want %q", k, got[k], v)
		}
	}
	if Flags(nil) != nil {
		t.Error("Flags(nil) is not nil")
	}
}

func TestArgs(t *testing.T) {
	got := Args([]string{"-c", "exec server --token SECRET", "x", "postgres://u:SECRET@h/db", "--password", "SECRET", "--port", "2379"})
	want := []string{"-c", "exec server --token REDACTED", "x", "postgres://u:REDACTED@h/db", "--password", "REDACTED", "--port", "2379"}
	if strings.Join(got, "|") != strings.Join(want, "|") {
		t.Errorf("Args\n got %q\nwant %q", got, want)
	}
}
