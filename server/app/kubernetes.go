package app

import (
	"log/slog"
	"time"

	"github.com/shoal-ml/shoal/provider/kubernetes"
	"github.com/shoal-ml/shoal/server/config"
)

// newKubernetesProvider builds a kubernetes location's provider from its
// config block (config.Catalog has checked it is there).
func newKubernetesProvider(lc config.LocationConfig, agentArgs []string, log *slog.Logger) (*kubernetes.Provider, error) {
	kc := lc.Kubernetes
	cfg := kubernetes.Config{
		Kubeconfig: kc.Kubeconfig, Context: kc.Context, Namespace: kc.Namespace,
		NodeImage: kc.NodeImage, AgentImage: kc.AgentImage, ImagePullPolicy: kc.ImagePullPolicy,
		NodeSelector: kc.NodeSelector, Labels: kc.Labels, PriorityClass: kc.PriorityClass,
		SecurityContext: kubernetes.SecurityContext{RunAsUser: kc.SecurityContext.RunAsUser,
			RunAsGroup: kc.SecurityContext.RunAsGroup, FSGroup: kc.SecurityContext.FSGroup},
		HostNetwork: kc.HostNetwork, RequestFraction: kc.RequestFraction,
		TerminationGrace: time.Duration(kc.TerminationGrace), AgentArgs: agentArgs, Logger: log,
	}
	for _, t := range kc.Tolerations {
		cfg.Tolerations = append(cfg.Tolerations, kubernetes.Toleration{Key: t.Key, Operator: t.Operator,
			Value: t.Value, Effect: t.Effect, TolerationSeconds: t.TolerationSeconds})
	}
	return kubernetes.New(cfg)
}
