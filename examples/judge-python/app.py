"""A silt judge in Python: it weighs the words an item shares with each answer."""
import re

from wit_world import exports
from wit_world.imports import types as t


def words(text):
    return set(re.findall(r"[a-z0-9]{3,}", text.lower()))


def spread(item, options):
    # one share per option; the +1 keeps a share for an option no word names
    weights = [1 + len(words(item) & words(o)) for o in options]
    total = sum(weights)
    return t.Answer_Distribution(t.Distribution([w / total for w in weights], None))


class Judge(exports.Judge):
    def info(self):
        return t.JudgeInfo(name="words-py", version="0.1.0", deterministic=True,
                           cost_per_million_input_tokens=0.0, preferred_batch_size=64)

    def ask(self, question, items):
        space = question.space
        answers = []
        for item in items:
            if isinstance(space, t.AnswerSpace_Judge):
                yes = len(words(item.text) & words(question.text + " " + space.value.yes))
                no = len(words(item.text) & words(space.value.no))
                # shared words are weak evidence: never further than 0.3 from even
                answers.append(t.Answer_YesProbability(0.5 + 0.3 * (yes - no) / (yes + no + 1)))
            elif isinstance(space, t.AnswerSpace_Choose):
                answers.append(spread(item.text, [o.label + " " + o.criterion for o in space.value]))
            else:
                answers.append(spread(item.text, space.value))
        usage = t.Usage(units=len(items), input_tokens=0, output_tokens=0, cost_usd=0.0)
        return t.Response(answers, usage)
