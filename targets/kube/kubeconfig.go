package kube

import (
	"encoding/base64"
	"fmt"
	"os"
	"path/filepath"

	"go.yaml.in/yaml/v3"
)

// The part of a kubeconfig file vigil reads: the current context's
// cluster (server, CA, insecure-skip-tls-verify) and user (token, token
// file, client certificate).
type kubeconfigFile struct {
	CurrentContext string `yaml:"current-context"`
	Clusters       []struct {
		Name    string `yaml:"name"`
		Cluster struct {
			Server                   string `yaml:"server"`
			CertificateAuthority     string `yaml:"certificate-authority"`
			CertificateAuthorityData string `yaml:"certificate-authority-data"`
			InsecureSkipTLSVerify    bool   `yaml:"insecure-skip-tls-verify"`
		} `yaml:"cluster"`
	} `yaml:"clusters"`
	Users []struct {
		Name string `yaml:"name"`
		User struct {
			Token                 string `yaml:"token"`
			TokenFile             string `yaml:"tokenFile"`
			ClientCertificate     string `yaml:"client-certificate"`
			ClientCertificateData string `yaml:"client-certificate-data"`
			ClientKey             string `yaml:"client-key"`
			ClientKeyData         string `yaml:"client-key-data"`
			Exec                  any    `yaml:"exec"`
			AuthProvider          any    `yaml:"auth-provider"`
		} `yaml:"user"`
	} `yaml:"users"`
	Contexts []struct {
		Name    string `yaml:"name"`
		Context struct {
			Cluster string `yaml:"cluster"`
			User    string `yaml:"user"`
		} `yaml:"context"`
	} `yaml:"contexts"`
}

// LoadKubeconfig reads the server, CA and credentials of a kubeconfig's
// current context (or of the context named). Relative file paths in it are
// relative to the file, as kubectl reads them. Exec plugins and auth
// providers are not supported: use a token.
func LoadKubeconfig(path, context string) (Config, error) {
	var cfg Config
	b, err := os.ReadFile(path)
	if err != nil {
		return cfg, fmt.Errorf("reading the kubeconfig: %w", err)
	}
	var kc kubeconfigFile
	if err := yaml.Unmarshal(b, &kc); err != nil {
		return cfg, fmt.Errorf("kubeconfig %s: %w", path, err)
	}
	if context == "" {
		context = kc.CurrentContext
	}
	if context == "" {
		return cfg, fmt.Errorf("kubeconfig %s has no current-context; name one", path)
	}
	dir := filepath.Dir(path)
	rel := func(p string) string {
		if p == "" || filepath.IsAbs(p) {
			return p
		}
		return filepath.Join(dir, p)
	}
	var clusterName, userName string
	found := false
	for _, c := range kc.Contexts {
		if c.Name == context {
			clusterName, userName, found = c.Context.Cluster, c.Context.User, true
		}
	}
	if !found {
		return cfg, fmt.Errorf("kubeconfig %s has no context %q", path, context)
	}
	found = false
	for _, c := range kc.Clusters {
		if c.Name != clusterName {
			continue
		}
		found = true
		cfg.Server, cfg.CAFile, cfg.Insecure = c.Cluster.Server, rel(c.Cluster.CertificateAuthority), c.Cluster.InsecureSkipTLSVerify
		if c.Cluster.CertificateAuthorityData != "" {
			if cfg.CA, err = base64.StdEncoding.DecodeString(c.Cluster.CertificateAuthorityData); err != nil {
				return cfg, fmt.Errorf("kubeconfig %s: cluster %s: certificate-authority-data is not base64: %w", path, clusterName, err)
			}
		}
	}
	if !found {
		return cfg, fmt.Errorf("kubeconfig %s: context %s names cluster %q, which is not there", path, context, clusterName)
	}
	for _, u := range kc.Users {
		if u.Name != userName {
			continue
		}
		if u.User.Exec != nil || u.User.AuthProvider != nil {
			return cfg, fmt.Errorf("kubeconfig %s: user %s authenticates through an exec plugin or auth provider, which vigil does not run; pass --server and --token instead", path, userName)
		}
		cfg.Token = u.User.Token
		if u.User.TokenFile != "" && cfg.Token == "" {
			t, err := os.ReadFile(rel(u.User.TokenFile))
			if err != nil {
				return cfg, fmt.Errorf("kubeconfig %s: user %s: %w", path, userName, err)
			}
			cfg.Token = string(trimSpace(t))
		}
		if cfg.ClientCert, err = fileOrData(rel(u.User.ClientCertificate), u.User.ClientCertificateData); err != nil {
			return cfg, fmt.Errorf("kubeconfig %s: user %s: client certificate: %w", path, userName, err)
		}
		if cfg.ClientKey, err = fileOrData(rel(u.User.ClientKey), u.User.ClientKeyData); err != nil {
			return cfg, fmt.Errorf("kubeconfig %s: user %s: client key: %w", path, userName, err)
		}
	}
	return cfg, nil
}

func fileOrData(file, data string) ([]byte, error) {
	if data != "" {
		return base64.StdEncoding.DecodeString(data)
	}
	if file != "" {
		return os.ReadFile(file)
	}
	return nil, nil
}

func trimSpace(b []byte) []byte {
	for len(b) > 0 && (b[len(b)-1] == '\n' || b[len(b)-1] == '\r' || b[len(b)-1] == ' ') {
		b = b[:len(b)-1]
	}
	return b
}
