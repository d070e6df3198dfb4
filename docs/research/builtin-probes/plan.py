import numpy as np, torch
from common import token_words
ROLE_WORD={"stay":" stays","lookalike":" stays","brief":" flashes","turn":" turn","count":" appear","sign":" sign"}
KIND_ROLES={"distractor":{"stay","lookalike"},"brief_event":{"brief"},"ordering":{"turn"},"counting":{"count"},"small_detail":{"sign"},"summary":{"stay","lookalike","brief","turn","count","sign"}}
THREE=[0]
def object_words(obj_kind, colour, shape, text, role):
    if role=="sign": return [" sign", text]
    ws=[colour, " "+colour, " "+shape] if not THREE[0] else [colour, " "+shape]
    if role: ws.append(ROLE_WORD[role])
    return ws
def frame_objects(scene, frame, keep):
    out=[]
    for k,a in enumerate(scene.actors):
        if keep(None, k): out.append((object_words("actor",a.colour,a.shape,None,None), a.bbox(frame, scene.width, scene.height)))
    for k,e in enumerate(scene.events):
        if e.visible(frame) and keep(e.role, k):
            out.append((object_words("event",e.colour,e.shape,e.text,e.role), e.bbox))
    return out
def plan_words(scene, indices, h, w, keep=lambda role,k: True, region=28, min_frac=0.15):
    return token_words(scene, indices, h, w, lambda f: frame_objects(scene, f, keep), region, min_frac)
class WordTable:
    def __init__(self, tokenizer):
        self.tok=tokenizer; self.cache={}
        self.none=self.id("none")
    def id(self, w):
        if w not in self.cache: self.cache[w]=int(self.tok(w,add_special_tokens=False)["input_ids"][0])
        return self.cache[w]
    def vectors(self, words_per_token, table):
        rows=[table[[self.id(w) for w in ws]].mean(0) if ws else table[self.none] for ws in words_per_token]
        return torch.stack(rows)
