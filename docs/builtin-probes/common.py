import os
import json, numpy as np, torch
from pathlib import Path
from itemscale.items import read_items_jsonl, Item
from itemscale.responses import TaskKind
from itemscale.synth._scene import VideoScene
SUITE=Path(os.environ.get("ITEMSCALE_PROBE_SUITE", "/tmp/h5/suite"))
SCENES={v["video_id"]:VideoScene(**v["scene"]) for v in json.load(open(SUITE/"suite.json"))["videos"]}

ROLEWORD={"stay":"stays","lookalike":"lookalike","brief":"flashes","turn":"turn","count":"appear"}
ROLES=[0]
def objects_at(scene, frame):
    out=[]
    for a in scene.actors:
        out.append(((a.colour,a.shape), a.bbox(frame, scene.width, scene.height)))
    for e in scene.events:
        if e.visible(frame):
            if e.role=="sign": out.append((("sign",), e.bbox))
            elif ROLES[0]: out.append(((e.colour,e.shape,ROLEWORD[e.role]), e.bbox))
            else: out.append(((e.colour,e.shape), e.bbox))
    return out

def plan_token_words(scene, indices, h, w, region=28, min_frac=0.15, pos=0, colour_only=False):
    idx=list(int(i) for i in indices)
    if len(idx)%2: idx.append(idx[-1])
    sx=w/scene.width; sy=h/scene.height
    rows,cols=h//region,w//region
    words=[]
    for g in range(len(idx)//2):
        objs=objects_at(scene, idx[2*g])+objects_at(scene, idx[2*g+1])
        for r in range(rows):
            for c in range(cols):
                rx0,ry0=c*region,r*region; ws=[]
                for names,(x0,y0,x1,y1) in objs:
                    X0,Y0,X1,Y1=x0*sx,y0*sy,x1*sx,y1*sy
                    ov=max(0,min(X1,rx0+region)-max(X0,rx0))*max(0,min(Y1,ry0+region)-max(Y0,ry0))
                    area=(X1-X0)*(Y1-Y0)
                    if ov>=min_frac*area and ov>=4:
                        for n in (names[:1] if colour_only else names):
                            if n not in ws: ws.append(n)
                if pos:
                    cy=(r+0.5)*region/h; cx=(c+0.5)*region/w
                    ws=ws+[("top","bottom")[int(cy*2)], ("left","middle","right")[int(cx*3)]]
                words.append(ws)
    return words

def word_ids(tokenizer, words):
    out={}
    for w in words:
        a=tokenizer(" "+w,add_special_tokens=False)["input_ids"]; b=tokenizer(w,add_special_tokens=False)["input_ids"]
        out[w]=int(b[0]) if len(b)==1 or len(a)>1 else int(a[0])
    return out

def teacher_from_words(words_per_token, table, ids, none_id):
    rows=[]
    for ws in words_per_token:
        if ws: rows.append(table[[ids[w] for w in ws]].mean(0))
        else: rows.append(table[none_id])
    return torch.stack(rows)
