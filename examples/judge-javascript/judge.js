// A silt judge in JavaScript: it weighs the words an item shares with each answer.
const words = (text) => new Set(text.toLowerCase().match(/[a-z0-9]{3,}/g) ?? []);
const shared = (a, b) => [...words(a)].filter((w) => words(b).has(w)).length;

// one share per option; the +1 keeps a share for an option no word names
function spread(item, options) {
  const weights = options.map((o) => 1 + shared(item, o));
  const total = weights.reduce((a, b) => a + b, 0);
  return { tag: 'distribution', val: { probabilities: weights.map((w) => w / total) } };
}

export const judge = {
  info() {
    return { name: 'words-js', version: '0.1.0', deterministic: true,
             costPerMillionInputTokens: 0, preferredBatchSize: 64 };
  },
  ask(question, items) {
    const space = question.space;
    const answers = items.map(({ text }) => {
      if (space.tag === 'judge') {
        const yes = shared(text, `${question.text} ${space.val.yes}`);
        const no = shared(text, space.val.no);
        // shared words are weak evidence: never further than 0.3 from even
        return { tag: 'yes-probability', val: 0.5 + (0.3 * (yes - no)) / (yes + no + 1) };
      }
      if (space.tag === 'choose') return spread(text, space.val.map((o) => `${o.label} ${o.criterion}`));
      return spread(text, space.val);
    });
    return { answers, usage: { units: items.length, inputTokens: 0n, outputTokens: 0n, costUsd: 0 } };
  },
};
