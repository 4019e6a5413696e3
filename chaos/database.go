package chaos

import (
	"context"
	"fmt"

	"github.com/vigil-suite/vigil/history"
)

// Database is what a fixture offers when the system under test keeps its
// data in a database server vigil runs (kine over PostgreSQL or MySQL).
type Database interface {
	// DatabaseName names the server in the history; empty when there is
	// none (kine over SQLite keeps it in its own process).
	DatabaseName() string
	KillDatabase() error
	StopDatabase() error
	StartDatabase(ctx context.Context) error
	PauseDatabase() error
	ResumeDatabase() error
}

// databaseFault kills, restarts or pauses the database server under the
// system, which stays up itself: what it answers while its storage is
// gone is the test.
type databaseFault struct{ kind string }

func (f databaseFault) Name() string { return f.kind + "-database" }

func (f databaseFault) Needs() Needs { return Needs{Database: true} }

func (f databaseFault) Describe() string {
	switch f.kind {
	case "kill":
		return "SIGKILL the database server under the system (kine's PostgreSQL or MySQL), start it again when healed"
	case "restart":
		return "stop the database server under the system cleanly, start it again when healed"
	}
	return "freeze the database server under the system (SIGSTOP), SIGCONT when healed"
}

func (f databaseFault) Inject(ctx context.Context, env *Env, _ uint32) (Injected, error) {
	if err := f.Needs().Unmet(env); err != nil {
		return Injected{}, err
	}
	db := env.Database
	in := Injected{Targets: []string{db.DatabaseName()}}
	var err error
	switch f.kind {
	case "kill":
		err = db.KillDatabase()
		in.Heal = db.StartDatabase
	case "restart":
		err = db.StopDatabase()
		in.Heal = db.StartDatabase
	case "pause":
		err = db.PauseDatabase()
		in.Heal = func(context.Context) error { return db.ResumeDatabase() }
	}
	if err != nil {
		return Injected{}, fmt.Errorf("%s the database: %w", f.kind, err)
	}
	return in, nil
}

// restarts: a kill or restart of the database starts it again when healed.
func (f databaseFault) restarts() string {
	if f.kind == "pause" {
		return ""
	}
	return history.RoleDatabase
}

func init() {
	for _, kind := range []string{"kill", "restart", "pause"} {
		register(databaseFault{kind: kind})
	}
}
