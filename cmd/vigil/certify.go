package main

import (
	flag "github.com/spf13/pflag"

	"github.com/vigil-suite/vigil/launch"
)

// cmdCertify is `vigil certify`: its flags fill launch.CertifyOptions.
func cmdCertify(fs *flag.FlagSet) action {
	o := launch.DefaultCertifyOptions()
	fs.StringVar(&o.Command, "command", "", "your etcd-API server's command line, with {client_port} (the port to serve on 127.0.0.1) and {data_dir}; vigil starts it, and every fault applies; read as a shell reads it (quotes, backslashes, $VAR; a bare program name is found on PATH), and written down with its credentials redacted (docs/kine.md)")
	fs.StringVar(&o.Endpoints, "endpoints", "", "HOST:PORT of an etcd-API server you run (only client-side faults apply; certify.json names those left out)")
	defineEtcdSecurity(fs, &o.Security)
	fs.BoolVar(&o.Security.InsecureSkipVerify, "insecure-skip-tls-verify", false, "--endpoints: do not verify the server's certificate (the etcd API phases only: kube-apiserver always verifies it)")
	fs.StringVar(&o.Fixture, "fixture", "", "kine: certify kine (--kine-version or --kine-binary) over --kine-backend, which vigil starts with its database, fresh in each phase, as vigil run --fixture kine and --store kine do; instead of --command or --endpoints")
	defineKine(fs, &o.Kine)
	fs.StringVar(&o.Out, "out", "", "output dir: certify.json, certify.html, junit.xml and one subdir per phase (default runs/certify-<timestamp>)")
	fs.DurationVar(&o.Duration, "duration", o.Duration, "length of each of the two runs with faults (the etcd API run and the Kubernetes run)")
	fs.DurationVar(&o.FaultInterval, "fault-interval", o.FaultInterval, "pause between the runs' faults")
	fs.Int64Var(&o.Seed, "seed", 0, "seed of the runs' workloads and fault schedules (default: random, printed)")
	fs.StringVar(&o.Reference, "reference", o.Reference, "the probes' differential: default (etcd of the server's reported release line; kube-apiserver over etcd) or none (faster, no differences judged)")
	fs.Var((*listFlag)(&o.Limitations), "limitation", "a departure from etcd your server's documentation states (repeatable, or comma-separated; docs/profiles.md): excuses exactly what it lists in the etcd API phases, and the certificate names it")
	fs.StringVar(&o.KubeVersion, "kube-version", o.KubeVersion, "Kubernetes version of the kube-apiserver vigil starts over the server")
	return func([]string) (int, error) {
		o.Given, o.Vigil = given(fs), version
		ctx, stop := stopContext()
		defer stop()
		return launch.Certify(ctx, o)
	}
}
