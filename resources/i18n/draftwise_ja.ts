<?xml version="1.0" encoding="utf-8"?>
<!DOCTYPE TS>
<TS version="2.1" language="ja" sourcelanguage="en">
  <context>
    <name>Draftwise</name>
    <message>
      <location filename="../../app/draftwise/core/chat/pictures.py" line="63" />
      <source>{name} is too big to attach ({size}); pictures up to {limit} are taken. Make it smaller and attach it again.</source>
      <translation>{name} は大きすぎて添付できません（{size}）。添付できる画像は {limit} までです。小さくしてから添付し直してください。</translation>
    </message>
    <message>
      <location filename="../../app/draftwise/core/chat/pictures.py" line="68" />
      <source>{name} is not a picture Draftwise can read; attach a PNG, JPEG, GIF, BMP or WebP file.</source>
      <translation>{name} は Draftwise が読める画像ではありません。PNG、JPEG、GIF、BMP、WebP のファイルを添付してください。</translation>
    </message>
    <message>
      <location filename="../../app/draftwise/core/chat/pictures.py" line="73" />
      <source>The engine could not use the picture ({error}); your message is kept: attach another picture or send it without one.</source>
      <translation>エンジンはこの画像を使えませんでした（{error}）。メッセージは残っています。別の画像を添付するか、画像なしで送ってください。</translation>
    </message>
    <message>
      <location filename="../../app/draftwise/core/chat/pictures.py" line="78" />
      <source>This model does not see pictures: it was launched without a vision projector (mmproj).</source>
      <translation>このモデルは画像を見られません。視覚プロジェクター（mmproj）なしで起動されています。</translation>
    </message>
    <message>
      <location filename="../../app/draftwise/core/chat/protocol.py" line="123" />
      <source>The engine sent a reply Draftwise cannot read.</source>
      <translation>エンジンから Draftwise が読めない返答が届きました。</translation>
    </message>
    <message>
      <location filename="../../app/draftwise/core/chat/protocol.py" line="265" />
      <source>The engine refused Draftwise's API key (401). It was probably started by another program or with another key; stop it and launch the model from Draftwise.</source>
      <translation>エンジンが Draftwise の API キーを拒否しました (401)。別のプログラムか別のキーで起動された可能性があります。停止して Draftwise からモデルを起動してください。</translation>
    </message>
    <message>
      <location filename="../../app/draftwise/core/chat/protocol.py" line="269" />
      <source>The model is still loading; your message goes out as soon as it is ready.</source>
      <translation>モデルを読み込み中です。準備ができ次第メッセージを送ります。</translation>
    </message>
    <message>
      <location filename="../../app/draftwise/core/chat/protocol.py" line="274" />
      <source>The conversation ({used} tokens) no longer fits the model's context of {ctx} tokens. Start a new chat, or launch with a longer context.</source>
      <translation>会話（{used} トークン）がモデルのコンテキスト {ctx} トークンに収まりません。新しいチャットを始めるか、より長いコンテキストで起動してください。</translation>
    </message>
    <message>
      <location filename="../../app/draftwise/core/chat/protocol.py" line="277" />
      <source>The conversation no longer fits the model's context. Start a new chat, or launch with a longer context.</source>
      <translation>会話がモデルのコンテキストに収まりません。新しいチャットを始めるか、より長いコンテキストで起動してください。</translation>
    </message>
    <message>
      <location filename="../../app/draftwise/core/chat/protocol.py" line="281" />
      <source>This engine has no chat endpoint ({path}).</source>
      <translation>このエンジンにはチャットのエンドポイント（{path}）がありません。</translation>
    </message>
    <message>
      <location filename="../../app/draftwise/core/chat/protocol.py" line="283" />
      <source>The engine answered with an error: {error}</source>
      <translation>エンジンがエラーを返しました: {error}</translation>
    </message>
    <message>
      <location filename="../../app/draftwise/core/chat/protocol.py" line="284" />
      <source>The engine answered with HTTP {status}.</source>
      <translation>エンジンが HTTP {status} を返しました。</translation>
    </message>
    <message>
      <location filename="../../app/draftwise/core/chat/protocol.py" line="296" />
      <source>The connection to the engine was lost ({error}).</source>
      <translation>エンジンとの接続が切れました（{error}）。</translation>
    </message>
    <message>
      <location filename="../../app/draftwise/core/chat/protocol.py" line="300" />
      <source>The engine does not answer ({error}). Launch the model again.</source>
      <translation>エンジンが応答しません（{error}）。モデルをもう一度起動してください。</translation>
    </message>
    <message>
      <location filename="../../app/draftwise/core/chat/protocol.py" line="305" />
      <source>No engine is running. Launch a model to chat with it.</source>
      <translation>エンジンが動いていません。チャットするにはモデルを起動してください。</translation>
    </message>
    <message>
      <location filename="../../app/draftwise/core/chat/protocol.py" line="309" />
      <source>The engine stopped while replying: {cause}</source>
      <translation>返答中にエンジンが停止しました: {cause}</translation>
    </message>
    <message>
      <location filename="../../app/draftwise/core/chat/protocol.py" line="314" />
      <source>The engine stopped: {cause} Launch the model again to chat.</source>
      <translation>エンジンが停止しました: {cause} チャットするにはモデルをもう一度起動してください。</translation>
    </message>
    <message>
      <location filename="../../app/draftwise/core/chat/protocol.py" line="318" />
      <source>Stopped; the reply so far is kept.</source>
      <translation>停止しました。ここまでの返答は残っています。</translation>
    </message>
    <message>
      <location filename="../../app/draftwise/core/chat/protocol.py" line="322" />
      <source>The reply was cut short ({error}); what arrived is kept.</source>
      <translation>返答が途中で切れました（{error}）。届いた分は残っています。</translation>
    </message>
    <message>
      <location filename="../../app/draftwise/core/chat/protocol.py" line="330" />
      <source>Wrote {n} tokens; press Continue to write on, or set Max tokens under More.</source>
      <translation>{n} トークン書きました。続けるには「続ける」を押すか、「詳細」で最大トークン数を設定してください。</translation>
    </message>
    <message>
      <location filename="../../app/draftwise/core/chat/protocol.py" line="332" />
      <source>The reply stopped at the max tokens limit ({n}); raise it under More for longer replies.</source>
      <translation>最大トークン数（{n}）で返答が止まりました。長い返答が必要なら「詳細」で上げてください。</translation>
    </message>
    <message>
      <location filename="../../app/draftwise/core/chat/protocol.py" line="336" />
      <source>The reply stopped because the conversation filled the model's context ({used} tokens). Start a new chat, or launch with a longer context.</source>
      <translation>会話がモデルのコンテキスト（{used} トークン）を使い切ったため、返答が止まりました。新しいチャットを始めるか、より長いコンテキストで起動してください。</translation>
    </message>
    <message>
      <location filename="../../app/draftwise/core/chat/protocol.py" line="338" />
      <source>The reply stopped because the conversation filled the model's context. Start a new chat, or launch with a longer context.</source>
      <translation>会話がモデルのコンテキストを使い切ったため、返答が止まりました。新しいチャットを始めるか、より長いコンテキストで起動してください。</translation>
    </message>
    <message>
      <location filename="../../app/draftwise/core/chat/protocol.py" line="405" />
      <source>first token {time}</source>
      <translation>最初のトークン {time}</translation>
    </message>
    <message>
      <location filename="../../app/draftwise/core/chat/protocol.py" line="407" />
      <source>{rate} tokens/s</source>
      <translation>{rate} トークン/秒</translation>
    </message>
    <message>
      <location filename="../../app/draftwise/core/chat/protocol.py" line="408" />
      <source>{n} tokens</source>
      <translation>{n} トークン</translation>
    </message>
    <message>
      <location filename="../../app/draftwise/core/chat/protocol.py" line="411" />
      <source>drafted {drafted}, accepted {accepted} ({share} %)</source>
      <translation>ドラフト {drafted}、採用 {accepted}（{share} %）</translation>
    </message>
    <message>
      <location filename="../../app/draftwise/core/chat/protocol.py" line="414" />
      <source>speculation is on, but nothing was drafted for this reply</source>
      <translation>投機的デコードは有効ですが、この返答では何もドラフトされませんでした</translation>
    </message>
    <message>
      <location filename="../../app/draftwise/core/chat/store.py" line="43" />
      <source>Your saved chats in {path} could not be read ({error}).</source>
      <translation>{path} の保存したチャットを読めませんでした（{error}）。</translation>
    </message>
    <message>
      <location filename="../../app/draftwise/core/chat/store.py" line="51" />
      <source>it holds no list of conversations</source>
      <translation>会話の一覧が入っていません</translation>
    </message>
    <message>
      <location filename="../../app/draftwise/core/chat/store.py" line="55" />
      <source>a conversation in it is damaged</source>
      <translation>壊れた会話が含まれています</translation>
    </message>
    <message>
      <location filename="../../app/draftwise/core/chat/store.py" line="58" />
      <source>it is not text</source>
      <translation>テキストではありません</translation>
    </message>
    <message>
      <location filename="../../app/draftwise/core/chat/store.py" line="60" />
      <source>it is not valid JSON (line {line}, column {column})</source>
      <translation>正しい JSON ではありません（{line} 行 {column} 列）</translation>
    </message>
    <message>
      <location filename="../../app/draftwise/core/chat/store.py" line="65" />
      <source>Your saved chats could not be read: {why}. The file could not be moved aside; new chats are not saved over it.</source>
      <translation>保存したチャットを読めませんでした: {why}。ファイルを退避できなかったため、新しいチャットで上書きしません。</translation>
    </message>
    <message>
      <location filename="../../app/draftwise/core/chat/store.py" line="67" />
      <source>Your saved chats could not be read: {why}. The file was set aside as {name}.</source>
      <translation>保存したチャットを読めませんでした: {why}。ファイルは {name} として退避しました。</translation>
    </message>
    <message>
      <location filename="../../app/draftwise/core/chat/store.py" line="80" />
      <source>Your chats could not be saved to {path}: {error}</source>
      <translation>チャットを {path} に保存できませんでした: {error}</translation>
    </message>
    <message>
      <location filename="../../app/draftwise/core/check/machine_check.py" line="68" />
      <source>A tiny test model</source>
      <translation>小さなテスト用モデル</translation>
    </message>
    <message>
      <location filename="../../app/draftwise/core/check/machine_check.py" line="69" />
      <source>written ({size}): it only proves the engine works, its words are nonsense</source>
      <translation>作成しました（{size}）。エンジンが動くことを確かめるためだけのもので、出てくる言葉に意味はありません</translation>
    </message>
    <message>
      <location filename="../../app/draftwise/core/check/machine_check.py" line="75" />
      <source>none installed</source>
      <translation>インストールされていません</translation>
    </message>
    <message>
      <location filename="../../app/draftwise/core/check/machine_check.py" line="77" />
      <source>not installed or not working ({why}). Press Install engine, or run `draftwise engine install` (10–40 minutes, once).</source>
      <translation>インストールされていないか動きません（{why}）。「エンジンをインストール」を押すか、`draftwise engine install` を実行してください（初回のみ 10〜40 分）。</translation>
    </message>
    <message>
      <location filename="../../app/draftwise/core/check/machine_check.py" line="80" />
      <source>The engine that runs models</source>
      <translation>モデルを動かすエンジン</translation>
    </message>
    <message>
      <location filename="../../app/draftwise/core/check/machine_check.py" line="92" />
      <source>Stopping it</source>
      <translation>停止</translation>
    </message>
    <message>
      <location filename="../../app/draftwise/core/check/machine_check.py" line="93" />
      <source>stopped; nothing is left running</source>
      <translation>停止しました。動いたまま残っているものはありません</translation>
    </message>
    <message>
      <location filename="../../app/draftwise/core/check/machine_check.py" line="94" />
      <source>stopped (exit code {code}); nothing is left running</source>
      <translation>停止しました（終了コード {code}）。動いたまま残っているものはありません</translation>
    </message>
    <message>
      <location filename="../../app/draftwise/core/check/machine_check.py" line="101" />
      <source>installed; it runs models on the processor</source>
      <translation>インストール済み。モデルをプロセッサーで動かします</translation>
    </message>
    <message>
      <location filename="../../app/draftwise/core/check/machine_check.py" line="102" />
      <source>installed; it can use a graphics card ({backend})</source>
      <translation>インストール済み。グラフィックスカードを使えます（{backend}）</translation>
    </message>
    <message>
      <location filename="../../app/draftwise/core/check/machine_check.py" line="135" />
      <source>Starting a model</source>
      <translation>モデルの起動</translation>
    </message>
    <message>
      <location filename="../../app/draftwise/core/check/machine_check.py" line="135" />
      <source>ready in {seconds} s</source>
      <translation>{seconds} 秒で準備完了</translation>
    </message>
    <message>
      <location filename="../../app/draftwise/core/check/machine_check.py" line="145" />
      <source>{tokens} word pieces at {speed} per second</source>
      <translation>{tokens} 個の語片を毎秒 {speed} 個の速さで</translation>
    </message>
    <message>
      <location filename="../../app/draftwise/core/check/machine_check.py" line="147" />
      <source>{tokens} word pieces</source>
      <translation>{tokens} 個の語片</translation>
    </message>
    <message>
      <location filename="../../app/draftwise/core/check/machine_check.py" line="148" />
      <source>Writing text</source>
      <translation>文章の生成</translation>
    </message>
    <message>
      <location filename="../../app/draftwise/core/check/machine_check.py" line="151" />
      <source>Graphics card</source>
      <translation>グラフィックスカード</translation>
    </message>
    <message>
      <location filename="../../app/draftwise/core/check/machine_check.py" line="151" />
      <source>used: {devices}</source>
      <translation>使用中: {devices}</translation>
    </message>
    <message>
      <location filename="../../app/draftwise/core/check/machine_check.py" line="154" />
      <source>not used: this engine runs models on the processor</source>
      <translation>使用していません。このエンジンはモデルをプロセッサーで動かします</translation>
    </message>
    <message>
      <location filename="../../app/draftwise/core/check/machine_check.py" line="157" />
      <source>not used, although this engine could use one ({backend}); check the graphics driver</source>
      <translation>このエンジンは使えるはずですが（{backend}）、使われていません。グラフィックスドライバーを確認してください</translation>
    </message>
    <message>
      <location filename="../../app/draftwise/core/check/machine_check.py" line="168" />
      <source>Quantized models</source>
      <translation>量子化モデル</translation>
    </message>
    <message>
      <location filename="../../app/draftwise/core/check/machine_check.py" line="188" />
      <source>it was not ready in time</source>
      <translation>時間内に準備ができませんでした</translation>
    </message>
    <message>
      <location filename="../../app/draftwise/core/check/machine_check.py" line="189" />
      <source>a small quantized model did not run: {why}</source>
      <translation>小さな量子化モデルが動きませんでした: {why}</translation>
    </message>
    <message>
      <location filename="../../app/draftwise/core/check/machine_check.py" line="193" />
      <source>{fix} Then a small quantized model ran ({tokens} word pieces).</source>
      <translation>{fix} その後、小さな量子化モデルが動きました（{tokens} 個の語片）。</translation>
    </message>
    <message>
      <location filename="../../app/draftwise/core/check/machine_check.py" line="196" />
      <source>a small quantized model runs ({tokens} word pieces)</source>
      <translation>小さな量子化モデルが動きます（{tokens} 個の語片）</translation>
    </message>
    <message>
      <location filename="../../app/draftwise/core/check/machine_check.py" line="208" />
      <source>could not prepare the MTP test: {error}</source>
      <translation>MTP のテストを準備できませんでした: {error}</translation>
    </message>
    <message>
      <location filename="../../app/draftwise/core/check/machine_check.py" line="211" />
      <source>Faster answers (speculation)</source>
      <translation>回答の高速化（投機的デコード）</translation>
    </message>
    <message>
      <location filename="../../app/draftwise/core/check/machine_check.py" line="211" />
      <source>the engine does not run MTP: {notes}</source>
      <translation>エンジンが MTP を実行しません: {notes}</translation>
    </message>
    <message>
      <location filename="../../app/draftwise/core/check/machine_check.py" line="217" />
      <source>MTP did not start: {error}</source>
      <translation>MTP が起動しませんでした: {error}</translation>
    </message>
    <message>
      <location filename="../../app/draftwise/core/check/machine_check.py" line="230" />
      <source>works: the model's built-in helper guessed {drafted} word pieces ahead (a real model gets many of them right)</source>
      <translation>動作しています。モデル内蔵の補助が {drafted} 個の語片を先読みしました（実際のモデルでは多くが当たります）</translation>
    </message>
    <message>
      <location filename="../../app/draftwise/core/check/machine_check.py" line="233" />
      <source>the engine started with MTP but drafted nothing</source>
      <translation>エンジンは MTP 付きで起動しましたが、何も下書きしませんでした</translation>
    </message>
    <message>
      <location filename="../../app/draftwise/core/engines/discovery.py" line="88" />
      <source>{binary} cannot be read: {error}</source>
      <translation>{binary} を読み込めません: {error}</translation>
    </message>
    <message>
      <location filename="../../app/draftwise/core/engines/discovery.py" line="93" />
      <source>{binary} is not executable; reinstall the engine or fix its permissions.</source>
      <translation>{binary} は実行できません。エンジンを再インストールするか、権限を直してください。</translation>
    </message>
    <message>
      <location filename="../../app/draftwise/core/engines/discovery.py" line="97" />
      <source>{binary} did not answer --version within {seconds} s.</source>
      <translation>{binary} が {seconds} 秒以内に --version に応答しませんでした。</translation>
    </message>
    <message>
      <location filename="../../app/draftwise/core/engines/discovery.py" line="100" />
      <source>{binary} does not start: {error}</source>
      <translation>{binary} が起動しません: {error}</translation>
    </message>
    <message>
      <location filename="../../app/draftwise/core/engines/discovery.py" line="105" />
      <source>{binary} --version failed (exit {code}): {last}</source>
      <translation>{binary} --version が失敗しました（終了コード {code}）: {last}</translation>
    </message>
    <message>
      <location filename="../../app/draftwise/core/engines/discovery.py" line="148" />
      <source>{path} does not exist; choose the llama-server file again.</source>
      <translation>{path} がありません。llama-server のファイルを選び直してください。</translation>
    </message>
    <message>
      <location filename="../../app/draftwise/core/gguf/header.py" line="46" />
      <source>The file is damaged or not a GGUF model; download it again.</source>
      <translation>ファイルが壊れているか、GGUF モデルではありません。もう一度ダウンロードしてください。</translation>
    </message>
    <message>
      <location filename="../../app/draftwise/core/gguf/header.py" line="85" />
      <source>{path}: at byte {offset}: {reason}. {hint}</source>
      <translation>{path}: {offset} バイト目: {reason}。{hint}</translation>
    </message>
    <message>
      <location filename="../../app/draftwise/core/gguf/header.py" line="88" />
      <source>{path}: at byte {offset}: {reason}.</source>
      <translation>{path}: {offset} バイト目: {reason}。</translation>
    </message>
    <message>
      <location filename="../../app/draftwise/core/gguf/header.py" line="90" />
      <source>{path}: {reason}. {hint}</source>
      <translation>{path}: {reason}。{hint}</translation>
    </message>
    <message>
      <location filename="../../app/draftwise/core/gguf/header.py" line="92" />
      <source>{path}: {reason}.</source>
      <translation>{path}: {reason}。</translation>
    </message>
    <message>
      <location filename="../../app/draftwise/core/gguf/parse.py" line="48" />
      <source>is a folder, not a GGUF file</source>
      <translation>フォルダーです（GGUF ファイルではありません）</translation>
    </message>
    <message>
      <location filename="../../app/draftwise/core/gguf/parse.py" line="51" />
      <source>no such file</source>
      <translation>ファイルがありません</translation>
    </message>
    <message>
      <location filename="../../app/draftwise/core/gguf/parse.py" line="54" />
      <source>permission denied: the file cannot be read</source>
      <translation>アクセスが拒否されました: ファイルを読み込めません</translation>
    </message>
    <message>
      <location filename="../../app/draftwise/core/gguf/parse.py" line="58" />
      <source>cannot open the file ({error})</source>
      <translation>ファイルを開けません（{error}）</translation>
    </message>
    <message>
      <location filename="../../app/draftwise/core/gguf/parse.py" line="70" />
      <source>cannot read the file ({error})</source>
      <translation>ファイルを読み込めません（{error}）</translation>
    </message>
    <message>
      <location filename="../../app/draftwise/core/gguf/parse.py" line="99" />
      <source>It is not a GGUF model, or it is damaged.</source>
      <translation>GGUF モデルではないか、壊れています。</translation>
    </message>
    <message>
      <location filename="../../app/draftwise/core/gguf/parse.py" line="109" />
      <source>Use the little-endian version of this model.</source>
      <translation>このモデルのリトルエンディアン版を使ってください。</translation>
    </message>
    <message>
      <location filename="../../app/draftwise/core/gguf/parse.py" line="115" />
      <source>Download a current conversion of this model.</source>
      <translation>このモデルの新しい変換版をダウンロードしてください。</translation>
    </message>
    <message>
      <location filename="../../app/draftwise/core/hub/catalog.py" line="87" />
      <source>Tiny and quick, and drafts its own next words (MTP): fine on any computer.</source>
      <translation>小さくて速く、次の言葉を自分で下書きします (MTP): どのコンピューターでも快適。</translation>
    </message>
    <message>
      <location filename="../../app/draftwise/core/hub/catalog.py" line="90" />
      <source>Small and quick, drafts its own next words (MTP): everyday questions.</source>
      <translation>小さくて速く、次の言葉を自分で下書きします (MTP): 日常の質問に。</translation>
    </message>
    <message>
      <location filename="../../app/draftwise/core/hub/catalog.py" line="93" />
      <source>A good all-rounder that drafts its own next words (MTP).</source>
      <translation>次の言葉を自分で下書きする (MTP)、バランスのよいモデル。</translation>
    </message>
    <message>
      <location filename="../../app/draftwise/core/hub/catalog.py" line="96" />
      <source>Stronger answers for 16 GB computers; drafts its own next words (MTP).</source>
      <translation>16 GB のコンピューター向けの、より強い回答。次の言葉を自分で下書きします (MTP)。</translation>
    </message>
    <message>
      <location filename="../../app/draftwise/core/hub/catalog.py" line="99" />
      <source>Strong answers; wants 24 GB or a big GPU; drafts its own next words (MTP).</source>
      <translation>強い回答。24 GB か大きな GPU が必要。次の言葉を自分で下書きします (MTP)。</translation>
    </message>
    <message>
      <location filename="../../app/draftwise/core/hub/catalog.py" line="102" />
      <source>A large mixture of experts that reads only 3B a word: quick for its size (MTP).</source>
      <translation>1 語ごとに 3B だけを読む大きな混合エキスパートモデル: 大きさの割に速い (MTP)。</translation>
    </message>
    <message>
      <location filename="../../app/draftwise/core/hub/catalog.py" line="106" />
      <source>Google's Gemma 4 with its MTP assistant: good writing, many languages.</source>
      <translation>Google の Gemma 4 と MTP アシスタント: 文章が上手で、多くの言語に対応。</translation>
    </message>
    <message>
      <location filename="../../app/draftwise/core/hub/catalog.py" line="110" />
      <source>OpenAI's open model: reasons step by step; a mixture of experts.</source>
      <translation>OpenAI のオープンモデル: 段階的に推論する混合エキスパートモデル。</translation>
    </message>
    <message>
      <location filename="../../app/draftwise/core/hub/catalog.py" line="114" />
      <source>Google's Gemma 3 with its small draft model: good writing, many languages.</source>
      <translation>Google の Gemma 3 と小さなドラフトモデル: 文章が上手で、多くの言語に対応。</translation>
    </message>
    <message>
      <location filename="../../app/draftwise/core/hub/catalog.py" line="125" />
      <source>Get the draft model too — usually 1.5–2× faster, same answers.</source>
      <translation>ドラフトモデルも入手する — 通常 1.5〜2 倍速く、答えは同じです。</translation>
    </message>
    <message>
      <location filename="../../app/draftwise/core/hub/catalog.py" line="137" />
      <source>About {rate} tokens a second here.</source>
      <translation>このコンピューターでは毎秒約 {rate} トークン。</translation>
    </message>
    <message>
      <location filename="../../app/draftwise/core/hub/catalog.py" line="138" />
      <source>Slow here: about {rate} tokens a second, slower than most people read.</source>
      <translation>このコンピューターでは遅めです：毎秒約 {rate} トークンで、多くの人が読む速さより遅くなります。</translation>
    </message>
    <message>
      <location filename="../../app/draftwise/core/hub/catalog.py" line="144" />
      <source>It would run on the graphics card.</source>
      <translation>グラフィックカードで動きます。</translation>
    </message>
    <message>
      <location filename="../../app/draftwise/core/hub/catalog.py" line="145" />
      <source>It would run partly on the graphics card, the rest on the processor.</source>
      <translation>一部をグラフィックカードで、残りをプロセッサーで動かします。</translation>
    </message>
    <message>
      <location filename="../../app/draftwise/core/hub/catalog.py" line="146" />
      <source>It would run on the processor.</source>
      <translation>プロセッサーで動きます。</translation>
    </message>
    <message>
      <location filename="../../app/draftwise/core/hub/catalog.py" line="147" />
      <source>A token is a piece of a word: in English about three quarters of a word.</source>
      <translation>トークンは単語の断片です。英語ではおよそ 4 分の 3 単語にあたります。</translation>
    </message>
    <message>
      <location filename="../../app/draftwise/core/hub/catalog.py" line="149" />
      <source>Counted without the draft model; with it, replies usually come faster.</source>
      <translation>ドラフトモデルなしの見積もりです。ドラフトモデルを使うと、たいていもっと速く返答します。</translation>
    </message>
    <message>
      <location filename="../../app/draftwise/core/hub/catalog.py" line="151" />
      <source>A first guess from this computer's memory speed; measured with the engine once it is installed.</source>
      <translation>このコンピューターのメモリ速度からの最初の見積もりです。エンジンをインストールすると、エンジンで測り直します。</translation>
    </message>
    <message>
      <location filename="../../app/draftwise/core/hub/client.py" line="92" />
      <source>{repo} has no GGUF model files; choose a repository whose name ends in -GGUF.</source>
      <translation>{repo} には GGUF モデルのファイルがありません。名前が -GGUF で終わるリポジトリを選んでください。</translation>
    </message>
    <message>
      <location filename="../../app/draftwise/core/hub/client.py" line="104" />
      <source>{repo} is gated: open its page on the hub, accept the terms, then set an access token (HF_TOKEN) and try again.</source>
      <translation>{repo} は利用制限付きです。ハブでそのページを開いて規約に同意し、アクセストークン（HF_TOKEN）を設定してからもう一度試してください。</translation>
    </message>
    <message>
      <location filename="../../app/draftwise/core/hub/client.py" line="109" />
      <source>{repo} was not found on the hub (or it is private): check the name; for a private repository set an access token (HF_TOKEN).</source>
      <translation>{repo} がハブに見つかりません（または非公開です）。名前を確認してください。非公開のリポジトリにはアクセストークン（HF_TOKEN）を設定してください。</translation>
    </message>
    <message>
      <location filename="../../app/draftwise/core/hub/client.py" line="114" />
      <source>{what} is not in the repository any more; refresh the list.</source>
      <translation>{what} はもうリポジトリにありません。一覧を更新してください。</translation>
    </message>
    <message>
      <location filename="../../app/draftwise/core/hub/client.py" line="118" />
      <source>The hub refused access to {repo} (HTTP {status}): check your access token (HF_TOKEN).</source>
      <translation>ハブが {repo} へのアクセスを拒否しました（HTTP {status}）。アクセストークン（HF_TOKEN）を確認してください。</translation>
    </message>
    <message>
      <location filename="../../app/draftwise/core/hub/client.py" line="122" />
      <source>The hub answered with an error for {repo}: {error}</source>
      <translation>ハブが {repo} についてエラーを返しました: {error}</translation>
    </message>
    <message>
      <location filename="../../app/draftwise/core/hub/client.py" line="123" />
      <source>Could not reach the model hub at {endpoint} ({error}); check the network connection.</source>
      <translation>モデルハブ {endpoint} に接続できませんでした（{error}）。ネットワーク接続を確認してください。</translation>
    </message>
    <message>
      <location filename="../../app/draftwise/core/hub/download.py" line="78" />
      <source>Not enough disk space in {folder}: {name} needs {need} more, {free} is free. Free some space or choose another library folder.</source>
      <translation>{folder} のディスク容量が足りません: {name} にはあと {need} 必要で、空きは {free} です。空きを作るか、別のライブラリフォルダーを選んでください。</translation>
    </message>
    <message>
      <location filename="../../app/draftwise/core/hub/download.py" line="179" />
      <source>{name} arrived damaged (its checksum does not match the hub's); it was set aside as {bad}. Download it again; if this repeats, the network or the mirror changes data.</source>
      <translation>{name} は壊れた状態で届きました（チェックサムがハブのものと一致しません）。{bad} として退避しました。もう一度ダウンロードしてください。繰り返す場合は、ネットワークかミラーがデータを変えています。</translation>
    </message>
    <message>
      <location filename="../../app/draftwise/core/hub/fetch.py" line="42" />
      <source>Could not remember {name} as the helper of {model} ({error}); the library may list it as a model of its own.</source>
      <translation>{name} を {model} のヘルパーとして記録できませんでした（{error}）。ライブラリでは単独のモデルとして表示されるかもしれません。</translation>
    </message>
    <message>
      <location filename="../../app/draftwise/core/hub/helpers.py" line="39" />
      <source>record of helper drafters</source>
      <translation>ヘルパーのドラフターの記録</translation>
    </message>
    <message>
      <location filename="../../app/draftwise/core/hub/judge.py" line="190" />
      <source>{name} is a drafter, not a model to run: it runs beside its model.</source>
      <translation>{name} はドラフター (下書き役) で、単独で動かすモデルではありません。モデルの横で動きます。</translation>
    </message>
    <message>
      <location filename="../../app/draftwise/core/hub/remote.py" line="100" />
      <source>{file}: its header is larger than {cap}, which no GGUF model's is; it cannot be judged before download. Download it to see its plan.</source>
      <translation>{file}: ヘッダーが {cap} を超えています。そのような GGUF モデルはないため、ダウンロード前には判定できません。ダウンロードしてから計画を確認してください。</translation>
    </message>
    <message>
      <location filename="../../app/draftwise/core/hub/remote.py" line="113" />
      <source>{file} on the hub is shorter than its listing says ({size}): it ended after {got}. Refresh the list; if it repeats, the repository's file is damaged.</source>
      <translation>ハブ上の {file} は一覧の大きさ ({size}) より短く、{got} で終わりました。一覧を更新してください。繰り返す場合、リポジトリのファイルが壊れています。</translation>
    </message>
    <message>
      <location filename="../../app/draftwise/core/hub/remote.py" line="162" />
      <source>The connection to the hub kept dropping while reading {file}'s header ({error}); check the network and try again.</source>
      <translation>{file} のヘッダーを読む間にハブとの接続が何度も切れました ({error})。ネットワークを確認してもう一度試してください。</translation>
    </message>
    <message>
      <location filename="../../app/draftwise/core/hub/remote.py" line="181" />
      <source>The hub (or a proxy) ignores partial requests (HTTP Range), so {file} cannot be judged before download; Draftwise stopped after {got}. Download it to see its plan.</source>
      <translation>ハブ (またはプロキシ) が部分リクエスト (HTTP Range) を無視するため、{file} はダウンロード前に判定できません。Draftwise は {got} で読むのをやめました。ダウンロードしてから計画を確認してください。</translation>
    </message>
    <message>
      <location filename="../../app/draftwise/core/hub/remote.py" line="233" />
      <source> (at byte {offset})</source>
      <translation> ({offset} バイト目)</translation>
    </message>
    <message>
      <location filename="../../app/draftwise/core/hub/remote.py" line="234" />
      <source>{file} cannot be read as a GGUF model: {problem}{where}. Choose another file of the repository.</source>
      <translation>{file} は GGUF モデルとして読めません: {problem}{where}。リポジトリの別のファイルを選んでください。</translation>
    </message>
    <message>
      <location filename="../../app/draftwise/core/hub/starters.py" line="165" />
      <source>{title} does not fit this computer.</source>
      <translation>{title} はこのコンピューターに収まりません。</translation>
    </message>
    <message>
      <location filename="../../app/draftwise/core/hub/starters.py" line="169" />
      <source>{title}: no file of {repos} runs here as promised.</source>
      <translation>{title}: {repos} のどのファイルも、ここでは説明どおりに動きません。</translation>
    </message>
    <message>
      <location filename="../../app/draftwise/core/hub/starters.py" line="170" />
      <source>{title} was not found on the hub.</source>
      <translation>{title} はハブで見つかりませんでした。</translation>
    </message>
    <message>
      <location filename="../../app/draftwise/core/hub/starters.py" line="197" />
      <source>The model hub could not be reached, so these are Draftwise's own suggestions, judged from their usual sizes: {error}</source>
      <translation>モデルハブに接続できなかったため、Draftwise 独自のおすすめを通常の大きさから判断して表示しています: {error}</translation>
    </message>
    <message>
      <location filename="../../app/draftwise/core/hub/starters.py" line="203" />
      <source>{title} is larger than this computer's memory.</source>
      <translation>{title} はこのコンピューターのメモリーより大きいです。</translation>
    </message>
    <message>
      <location filename="../../app/draftwise/core/launch/crash.py" line="93" />
      <source>signal {number}</source>
      <translation>シグナル {number}</translation>
    </message>
    <message>
      <location filename="../../app/draftwise/core/launch/crash.py" line="94" />
      <source>killed by {signal}</source>
      <translation>{signal} で強制終了</translation>
    </message>
    <message>
      <location filename="../../app/draftwise/core/launch/crash.py" line="98" />
      <source>exit code {code}</source>
      <translation>終了コード {code}</translation>
    </message>
    <message>
      <location filename="../../app/draftwise/core/launch/crash.py" line="114" />
      <source>{sentence} {next_step}</source>
      <translation>{sentence}{next_step}</translation>
    </message>
    <message>
      <location filename="../../app/draftwise/core/launch/crash.py" line="225" />
      <source>The engine stopped while writing a reply: the model wrote token {id}, which the draft's vocabulary lacks.</source>
      <translation>応答の生成中にエンジンが止まりました: モデルがトークン {id} を出力しましたが、ドラフトモデルの語彙にはこのトークンがありません。</translation>
    </message>
    <message>
      <location filename="../../app/draftwise/core/launch/crash.py" line="228" />
      <source>The engine stopped while writing a reply, inside its speculative decoding (the drafter).</source>
      <translation>応答の生成中に、投機的デコーディング（ドラフター）の処理の中でエンジンが止まりました。</translation>
    </message>
    <message>
      <location filename="../../app/draftwise/core/launch/crash.py" line="230" />
      <source>Start without this drafter, or choose a draft model whose vocabulary covers the model's.</source>
      <translation>このドラフターなしで起動するか、モデルの語彙をすべて含むドラフトモデルを選んでください。</translation>
    </message>
    <message>
      <location filename="../../app/draftwise/core/launch/crash.py" line="239" />
      <source>The engine cannot start: the shared library {name} is missing.</source>
      <translation>エンジンを起動できません: 共有ライブラリ {name} がありません。</translation>
    </message>
    <message>
      <location filename="../../app/draftwise/core/launch/crash.py" line="240" />
      <source>a library</source>
      <translation>ライブラリ</translation>
    </message>
    <message>
      <location filename="../../app/draftwise/core/launch/crash.py" line="241" />
      <source>Install the engine's runtime (GPU driver or toolkit), or reinstall the engine with `draftwise engine install --force`.</source>
      <translation>エンジンのランタイム（GPU ドライバーまたはツールキット）をインストールするか、`draftwise engine install --force` でエンジンを入れ直してください。</translation>
    </message>
    <message>
      <location filename="../../app/draftwise/core/launch/crash.py" line="246" />
      <source>port {port}</source>
      <translation>ポート {port}</translation>
    </message>
    <message>
      <location filename="../../app/draftwise/core/launch/crash.py" line="246" />
      <source>its port</source>
      <translation>ポート</translation>
    </message>
    <message>
      <location filename="../../app/draftwise/core/launch/crash.py" line="251" />
      <source>The model's MTP head is incomplete (its tensors were stripped), so the engine crashed building the MTP graph.</source>
      <translation>モデルの MTP ヘッドが不完全なため（テンソルが取り除かれています）、エンジンが MTP の準備中にクラッシュしました。</translation>
    </message>
    <message>
      <location filename="../../app/draftwise/core/launch/crash.py" line="254" />
      <source>The engine was asked to run MTP, but this model has no MTP layers it can use.</source>
      <translation>エンジンに MTP を使うよう指示しましたが、このモデルには使える MTP 層がありません。</translation>
    </message>
    <message>
      <location filename="../../app/draftwise/core/launch/crash.py" line="255" />
      <source>Start without speculation (MTP off), or use a file that includes the MTP head.</source>
      <translation>投機的デコードなし（MTP オフ）で起動するか、MTP ヘッドを含むファイルを使ってください。</translation>
    </message>
    <message>
      <location filename="../../app/draftwise/core/launch/crash.py" line="259" />
      <source>the draft model</source>
      <translation>（ファイル名不明）</translation>
    </message>
    <message>
      <location filename="../../app/draftwise/core/launch/crash.py" line="262" />
      <source>The engine could not load the draft model {name} because memory ran out.</source>
      <translation>メモリが足りず、エンジンはドラフトモデル {name} を読み込めませんでした。</translation>
    </message>
    <message>
      <location filename="../../app/draftwise/core/launch/crash.py" line="264" />
      <source>The engine could not load the draft model {name} ({detail}).</source>
      <translation>エンジンはドラフトモデル {name} を読み込めませんでした（{detail}）。</translation>
    </message>
    <message>
      <location filename="../../app/draftwise/core/launch/crash.py" line="267" />
      <source>The engine could not load the draft model {name}.</source>
      <translation>エンジンはドラフトモデル {name} を読み込めませんでした。</translation>
    </message>
    <message>
      <location filename="../../app/draftwise/core/launch/crash.py" line="268" />
      <source>Choose another draft model from the same family, or start without one.</source>
      <translation>同じファミリーの別のドラフトモデルを選ぶか、ドラフトモデルなしで起動してください。</translation>
    </message>
    <message>
      <location filename="../../app/draftwise/core/launch/crash.py" line="271" />
      <source>The model file is inconsistent: its metadata declares more tensors than it holds.</source>
      <translation>モデルファイルが壊れています: メタデータに書かれたテンソルの数が、実際より多くなっています。</translation>
    </message>
    <message>
      <location filename="../../app/draftwise/core/launch/crash.py" line="272" />
      <source>Download the model again, or a different quantization of it.</source>
      <translation>モデルをもう一度ダウンロードするか、別の量子化版を使ってください。</translation>
    </message>
    <message>
      <location filename="../../app/draftwise/core/launch/crash.py" line="275" />
      <source>The compressed KV cache ({kv}) does not fit this model's attention heads.</source>
      <translation>圧縮した KV キャッシュ（{kv}）は、このモデルのアテンションヘッドに合いません。</translation>
    </message>
    <message>
      <location filename="../../app/draftwise/core/launch/crash.py" line="276" />
      <source>The compressed KV cache does not fit this model's attention heads.</source>
      <translation>圧縮した KV キャッシュは、このモデルのアテンションヘッドに合いません。</translation>
    </message>
    <message>
      <location filename="../../app/draftwise/core/launch/crash.py" line="277" />
      <source>Set the KV cache back to Auto (or f16) and start again.</source>
      <translation>KV キャッシュを自動（または f16）に戻して、もう一度起動してください。</translation>
    </message>
    <message>
      <location filename="../../app/draftwise/core/launch/crash.py" line="288" />
      <source>{device} GPU memory</source>
      <translation>{device} の GPU メモリ</translation>
    </message>
    <message>
      <location filename="../../app/draftwise/core/launch/crash.py" line="288" />
      <source>memory</source>
      <translation>メモリ</translation>
    </message>
    <message>
      <location filename="../../app/draftwise/core/launch/crash.py" line="290" />
      <source>system memory (RAM)</source>
      <translation>システムメモリ（RAM）</translation>
    </message>
    <message>
      <location filename="../../app/draftwise/core/launch/crash.py" line="291" />
      <source>The engine ran out of {where} while loading.</source>
      <translation>読み込み中にエンジンの{where}が足りなくなりました。</translation>
    </message>
    <message>
      <location filename="../../app/draftwise/core/launch/crash.py" line="292" />
      <source>Use a smaller context, fewer GPU layers, a smaller quantization, or close other programs that use the GPU.</source>
      <translation>コンテキストを小さくする、GPU に載せる層を減らす、小さい量子化版を使う、または GPU を使うほかのプログラムを閉じてください。</translation>
    </message>
    <message>
      <location filename="../../app/draftwise/core/launch/crash.py" line="296" />
      <source>A worker computer went away: the engine lost its connection to one of the other computers it was using.</source>
      <translation>ワーカーのコンピューターが応答しなくなりました。エンジンが使っていた他のコンピューターとの接続が切れました。</translation>
    </message>
    <message>
      <location filename="../../app/draftwise/core/launch/crash.py" line="298" />
      <source>Start ggml-rpc-server there again, or launch without that computer.</source>
      <translation>そのコンピューターで ggml-rpc-server をもう一度起動するか、そのコンピューターなしで起動してください。</translation>
    </message>
    <message>
      <location filename="../../app/draftwise/core/launch/crash.py" line="302" />
      <source>The worker {worker} did not answer when the engine started.</source>
      <translation>エンジンの起動時にワーカー {worker} が応答しませんでした。</translation>
    </message>
    <message>
      <location filename="../../app/draftwise/core/launch/crash.py" line="307" />
      <source>The engine stopped on an internal check ({what}).</source>
      <translation>エンジンが内部チェックで停止しました（{what}）。</translation>
    </message>
    <message>
      <location filename="../../app/draftwise/core/launch/crash.py" line="308" />
      <source>The engine stopped on an internal check.</source>
      <translation>エンジンが内部チェックで停止しました。</translation>
    </message>
    <message>
      <location filename="../../app/draftwise/core/launch/crash.py" line="310" />
      <source>This is an engine bug or an unusual model; try without extra engine arguments, or update the engine.</source>
      <translation>エンジンの不具合か、特殊なモデルです。エンジンの追加引数なしで試すか、エンジンを更新してください。</translation>
    </message>
    <message>
      <location filename="../../app/draftwise/core/launch/crash.py" line="316" />
      <source>The engine could not load the model: {why}.</source>
      <translation>エンジンはモデルを読み込めませんでした: {why}。</translation>
    </message>
    <message>
      <location filename="../../app/draftwise/core/launch/crash.py" line="317" />
      <source>Check that the file is a complete GGUF model (download it again if unsure).</source>
      <translation>ファイルが完全な GGUF モデルか確かめてください（不安なら、もう一度ダウンロードしてください）。</translation>
    </message>
    <message>
      <location filename="../../app/draftwise/core/launch/crash.py" line="323" />
      <source>The engine ended for an unknown reason.</source>
      <translation>エンジンが不明な理由で終了しました。</translation>
    </message>
    <message>
      <location filename="../../app/draftwise/core/launch/crash.py" line="323" />
      <source>Look at the log for details.</source>
      <translation>詳しくはログを見てください。</translation>
    </message>
    <message>
      <location filename="../../app/draftwise/core/launch/crash.py" line="329" />
      <source>The engine uses processor instructions this computer lacks (illegal instruction).</source>
      <translation>エンジンが、このコンピューターにない CPU 命令を使っています（不正な命令）。</translation>
    </message>
    <message>
      <location filename="../../app/draftwise/core/launch/crash.py" line="330" />
      <source>Install the portable CPU build of the engine (`draftwise engine install --force`).</source>
      <translation>エンジンの汎用 CPU 版をインストールしてください（`draftwise engine install --force`）。</translation>
    </message>
    <message>
      <location filename="../../app/draftwise/core/launch/crash.py" line="333" />
      <source>The engine cannot start: a library it needs is missing.</source>
      <translation>エンジンを起動できません: 必要なライブラリがありません。</translation>
    </message>
    <message>
      <location filename="../../app/draftwise/core/launch/crash.py" line="334" />
      <source>Install the engine's runtime (GPU driver or toolkit), or reinstall the engine.</source>
      <translation>エンジンのランタイム（GPU ドライバーまたはツールキット）をインストールするか、エンジンを入れ直してください。</translation>
    </message>
    <message>
      <location filename="../../app/draftwise/core/launch/crash.py" line="336" />
      <source>The engine was killed from outside (by another program, or by the system when memory ran out).</source>
      <translation>エンジンが外部から強制終了されました（別のプログラム、またはメモリ不足のときにシステムによって）。</translation>
    </message>
    <message>
      <location filename="../../app/draftwise/core/launch/crash.py" line="338" />
      <source>If memory is short, use a smaller context or model; then start it again.</source>
      <translation>メモリが足りないときは、コンテキストかモデルを小さくして、もう一度起動してください。</translation>
    </message>
    <message>
      <location filename="../../app/draftwise/core/launch/crash.py" line="340" />
      <source>The engine crashed (segmentation fault).</source>
      <translation>エンジンがクラッシュしました（セグメンテーション違反）。</translation>
    </message>
    <message>
      <location filename="../../app/draftwise/core/launch/crash.py" line="341" />
      <source>Check that the model file is a complete model and not a drafter or MTP-only file; try without extra engine arguments.</source>
      <translation>モデルファイルが完全なモデルで、ドラフターや MTP だけのファイルではないことを確かめてください。エンジンの追加引数なしでも試してください。</translation>
    </message>
    <message>
      <location filename="../../app/draftwise/core/launch/crash.py" line="345" />
      <source>The engine exited on its own.</source>
      <translation>エンジンが自分で終了しました。</translation>
    </message>
    <message>
      <location filename="../../app/draftwise/core/launch/crash.py" line="346" />
      <source>Start it again; look at the log if it keeps exiting.</source>
      <translation>もう一度起動してください。何度も終了するときはログを見てください。</translation>
    </message>
    <message>
      <location filename="../../app/draftwise/core/launch/crash.py" line="348" />
      <source>Try without speculation or extra engine arguments; the log has the details.</source>
      <translation>投機的デコードやエンジンの追加引数なしで試してください。詳しくはログにあります。</translation>
    </message>
    <message>
      <location filename="../../app/draftwise/core/launch/crash.py" line="349" />
      <source>Try without extra engine arguments; the log has the details.</source>
      <translation>エンジンの追加引数なしで試してください。詳しくはログにあります。</translation>
    </message>
    <message>
      <location filename="../../app/draftwise/core/launch/crash.py" line="350" />
      <source>The engine stopped unexpectedly ({status}): {last}.</source>
      <translation>エンジンが予期せず停止しました（{status}）: {last}。</translation>
    </message>
    <message>
      <location filename="../../app/draftwise/core/launch/crash.py" line="351" />
      <source>The engine stopped unexpectedly ({status}).</source>
      <translation>エンジンが予期せず停止しました（{status}）。</translation>
    </message>
    <message>
      <location filename="../../app/draftwise/core/launch/crash.py" line="358" />
      <source>The engine could not listen on {where}: another program uses it.</source>
      <translation>エンジンが{where}で待ち受けできませんでした: 別のプログラムが使っています。</translation>
    </message>
    <message>
      <location filename="../../app/draftwise/core/launch/crash.py" line="360" />
      <source>Choose another port, or stop the program that uses it.</source>
      <translation>別のポートを選ぶか、そのポートを使っているプログラムを止めてください。</translation>
    </message>
    <message>
      <location filename="../../app/draftwise/core/launch/crash.py" line="365" />
      <source>The engine {program} could not be started: {reason}.</source>
      <translation>エンジン {program} を起動できませんでした: {reason}。</translation>
    </message>
    <message>
      <location filename="../../app/draftwise/core/launch/crash.py" line="367" />
      <source>Install the engine with `draftwise engine install`, or choose the llama-server file again.</source>
      <translation>`draftwise engine install` でエンジンをインストールするか、llama-server のファイルを選び直してください。</translation>
    </message>
    <message>
      <location filename="../../app/draftwise/core/launch/crash.py" line="373" />
      <source>The draft model's vocabulary does not match the model's: the engine serves without speculation although it was asked for it. Choose a draft model from the same family.</source>
      <translation>ドラフトモデルの語彙がモデルと合いません: 指定したのに、エンジンは投機的デコードなしで動いています。同じファミリーのドラフトモデルを選んでください。</translation>
    </message>
    <message>
      <location filename="../../app/draftwise/core/launch/crash.py" line="440" />
      <source>The GPU driver crashed while answering with flash attention on; the engine starts again with flash attention off, and this model keeps it off on this device.</source>
      <translation>フラッシュアテンションを使った応答中に GPU ドライバーが落ちました。フラッシュアテンションを切ってエンジンを起動し直します。このデバイスではこのモデルは今後も切ったままにします。</translation>
    </message>
    <message>
      <location filename="../../app/draftwise/core/launch/crash.py" line="444" />
      <source>The CPU's AMX kernels stopped with an illegal instruction on this computer; the engine starts again without them (-nr) and keeps them off on this computer, for every model.</source>
      <translation>このコンピューターでは CPU の AMX カーネルが不正な命令で止まりました。AMX を使わずに（-nr）エンジンを起動し直し、このコンピューターでは今後どのモデルでも使いません。</translation>
    </message>
    <message>
      <location filename="../../app/draftwise/core/launch/crash.py" line="449" />
      <source>The engine stopped ({status}) in the CPU's kernels for re-laid weights (CPU_REPACK) on this computer; it starts again without them (-nr) and keeps them off on this computer, for every model.</source>
      <translation>このコンピューターでは、再配置した重み用の CPU カーネル（CPU_REPACK）でエンジンが停止しました（{status}）。再配置せずに（-nr）起動し直し、このコンピューターでは今後どのモデルでも使いません。</translation>
    </message>
    <message>
      <location filename="../../app/draftwise/core/launch/crash.py" line="461" />
      <source>A worker computer went away: {workers} stopped answering while the engine used it.</source>
      <translation>ワーカーのコンピューターが応答しなくなりました。エンジンの使用中に {workers} が応答を止めました。</translation>
    </message>
    <message>
      <location filename="../../app/draftwise/core/launch/crash.py" line="463" />
      <source>Start ggml-rpc-server there again, or launch without it.</source>
      <translation>そこで ggml-rpc-server をもう一度起動するか、それなしで起動してください。</translation>
    </message>
    <message>
      <location filename="../../app/draftwise/core/launch/fixes.py" line="102" />
      <source>record of engine fixes</source>
      <translation>エンジンの修正の記録</translation>
    </message>
    <message>
      <location filename="../../app/draftwise/core/launch/gpu_check.py" line="106" />
      <source>GPU not used: this engine build has no {backend} backend, so {device} is out of its reach; the model runs on the CPU. Install the {backend} engine (`draftwise engine install --backend {backend_id}`) and choose it with --engine or in the engine list.</source>
      <translation>GPU は使われていません: このエンジンには {backend} バックエンドがないため {device} を使えず、モデルは CPU で動いています。{backend} 版のエンジンを入れ（`draftwise engine install --backend {backend_id}`）、--engine かエンジン一覧で選んでください。</translation>
    </message>
    <message>
      <location filename="../../app/draftwise/core/launch/gpu_check.py" line="116" />
      <source>GPU not used: the engine said "{line}", so the model runs on the CPU (much slower). Check the GPU driver, or choose the device explicitly.</source>
      <translation>GPU は使われていません: エンジンが「{line}」と報告したため、モデルは CPU で動いています（とても遅くなります）。GPU ドライバーを確かめるか、デバイスを明示して選んでください。</translation>
    </message>
    <message>
      <location filename="../../app/draftwise/core/launch/gpu_check.py" line="120" />
      <source>GPU not used: the engine opened {devices} but offloaded 0 of {m} layers to it.</source>
      <translation>GPU は使われていません: エンジンは {devices} を開きましたが、{m} 層のうち 1 層も載せていません。</translation>
    </message>
    <message>
      <location filename="../../app/draftwise/core/launch/gpu_check.py" line="123" />
      <source>GPU not used: the engine did not open {devices}; the model runs on the CPU.</source>
      <translation>GPU は使われていません: エンジンは {devices} を開かず、モデルは CPU で動いています。</translation>
    </message>
    <message>
      <location filename="../../app/draftwise/core/launch/gpu_check.py" line="130" />
      <source>{n} of {m} layers on {devices}.</source>
      <translation>{m} 層のうち {n} 層が {devices} にあります。</translation>
    </message>
    <message>
      <location filename="../../app/draftwise/core/launch/gpu_check.py" line="135" />
      <source>This Vulkan engine runs on the CPU (the engine said "{line}"): it found no GPU it uses by itself. A software device (such as llvmpipe) is used only when you choose it (--device).</source>
      <translation>この Vulkan エンジンは CPU で動いています（エンジンの報告:「{line}」）: 自分から使う GPU が見つかりませんでした。ソフトウェアのデバイス（llvmpipe など）は、選んだとき（--device）だけ使われます。</translation>
    </message>
    <message>
      <location filename="../../app/draftwise/core/launch/gpu_check.py" line="139" />
      <source>This Vulkan engine runs on the CPU: it found no GPU it uses by itself. A software device (such as llvmpipe) is used only when you choose it (--device).</source>
      <translation>この Vulkan エンジンは CPU で動いています: 自分から使う GPU が見つかりませんでした。ソフトウェアのデバイス（llvmpipe など）は、選んだとき（--device）だけ使われます。</translation>
    </message>
    <message>
      <location filename="../../app/draftwise/core/launch/gpu_check.py" line="143" />
      <source>This {backend} engine runs on the CPU (the engine said "{line}"), which is much slower. Check the GPU driver, or choose which GPUs to use.</source>
      <translation>この {backend} エンジンは CPU で動いています（エンジンの報告:「{line}」）。とても遅くなります。GPU ドライバーを確かめるか、使う GPU を選んでください。</translation>
    </message>
    <message>
      <location filename="../../app/draftwise/core/launch/gpu_check.py" line="146" />
      <source>This {backend} engine runs on the CPU, which is much slower. Check the GPU driver, or choose which GPUs to use.</source>
      <translation>この {backend} エンジンは CPU で動いています。とても遅くなります。GPU ドライバーを確かめるか、使う GPU を選んでください。</translation>
    </message>
    <message>
      <location filename="../../app/draftwise/core/launch/ladder.py" line="86" />
      <source>no automatic drafter</source>
      <translation>自動ドラフターなし</translation>
    </message>
    <message>
      <location filename="../../app/draftwise/core/launch/ladder.py" line="96" />
      <source>{n} layers on the GPU</source>
      <translation>GPU に {n} 層</translation>
    </message>
    <message>
      <location filename="../../app/draftwise/core/launch/ladder.py" line="103" />
      <source>the full settings</source>
      <translation>本来の設定</translation>
    </message>
    <message>
      <location filename="../../app/draftwise/core/launch/ladder.py" line="106" />
      <source>{first}, {rest}</source>
      <translation>{first}、{rest}</translation>
    </message>
    <message>
      <location filename="../../app/draftwise/core/launch/ladder.py" line="192" />
      <source>the automatic drafter off</source>
      <translation>自動ドラフターをオフにした設定</translation>
    </message>
    <message>
      <location filename="../../app/draftwise/core/launch/ladder.py" line="194" />
      <source>a {kv} KV cache</source>
      <translation>{kv} の KV キャッシュ</translation>
    </message>
    <message>
      <location filename="../../app/draftwise/core/launch/ladder.py" line="196" />
      <source>a {ctx} context</source>
      <translation>{ctx} のコンテキスト</translation>
    </message>
    <message>
      <location filename="../../app/draftwise/core/launch/ladder.py" line="199" />
      <source>the experts in RAM</source>
      <translation>エキスパートを RAM に置いた設定</translation>
    </message>
    <message>
      <location filename="../../app/draftwise/core/launch/ladder.py" line="200" />
      <source>{n} of {total} layers on the GPU</source>
      <translation>{total} 層中 {n} 層を GPU に置いた設定</translation>
    </message>
    <message>
      <location filename="../../app/draftwise/core/launch/ladder.py" line="201" />
      <source>the CPU only</source>
      <translation>CPU のみ</translation>
    </message>
    <message>
      <location filename="../../app/draftwise/core/launch/ladder.py" line="236" />
      <source>The start with {change} failed for another reason, so Draftwise stopped lowering the settings; the cause is below.</source>
      <translation>{change}での起動はメモリ以外の理由で失敗したため、Draftwise は設定を下げるのをやめました。原因は下にあります。</translation>
    </message>
    <message>
      <location filename="../../app/draftwise/core/launch/ladder.py" line="260" />
      <source>{cause} Starting it again with {change}.</source>
      <translation>{cause}{change}でもう一度起動します。</translation>
    </message>
    <message>
      <location filename="../../app/draftwise/core/launch/ladder.py" line="267" />
      <source>Draftwise has no lower setting to try for this model.</source>
      <translation>このモデルで試せる、より低い設定はありません。</translation>
    </message>
    <message>
      <location filename="../../app/draftwise/core/launch/ladder.py" line="268" />
      <source>Draftwise has no lower setting left to try: it ran out of memory even with {change}.</source>
      <translation>試せる低い設定はもうありません: {change}でもメモリが足りませんでした。</translation>
    </message>
    <message>
      <location filename="../../app/draftwise/core/launch/ladder.py" line="295" />
      <source>out of memory</source>
      <translation>メモリ不足</translation>
    </message>
    <message>
      <location filename="../../app/draftwise/core/launch/ladder.py" line="317" />
      <source>The engine ran out of memory with the drafter you chose. To let Draftwise lower the settings, clear the Draft model field (or remove --spec-type from the extra arguments), or choose a smaller drafter.</source>
      <translation>あなたが選んだドラフターでエンジンのメモリが足りなくなりました。Draftwise に設定を下げさせるには、ドラフトモデル欄を空にする（または追加引数から --spec-type を外す）か、より小さなドラフターを選んでください。</translation>
    </message>
    <message>
      <location filename="../../app/draftwise/core/launch/ladder.py" line="325" />
      <source>The engine ran out of memory with the {kv} KV cache you chose. Set the KV cache to Auto (or q8_0) to let Draftwise lower it.</source>
      <translation>あなたが選んだ {kv} の KV キャッシュでエンジンのメモリが足りなくなりました。Draftwise に下げさせるには、KV キャッシュを「自動」（または q8_0）にしてください。</translation>
    </message>
    <message>
      <location filename="../../app/draftwise/core/launch/ladder.py" line="335" />
      <source>The engine ran out of memory with the {ctx} context you chose. Set the context to Auto (or smaller) to let Draftwise lower it.</source>
      <translation>あなたが選んだ {ctx} のコンテキストでエンジンのメモリが足りなくなりました。Draftwise に下げさせるには、コンテキストを「自動」（またはより小さく）にしてください。</translation>
    </message>
    <message>
      <location filename="../../app/draftwise/core/launch/ladder.py" line="346" />
      <source>The engine ran out of memory with the GPU layers you set (-ngl / --n-cpu-moe). Remove them from the extra arguments to let Draftwise move layers to the CPU.</source>
      <translation>あなたが指定した GPU 層（-ngl / --n-cpu-moe）でエンジンのメモリが足りなくなりました。Draftwise に層を CPU へ移させるには、追加引数から外してください。</translation>
    </message>
    <message>
      <location filename="../../app/draftwise/core/launch/ladder.py" line="391" />
      <source>Starting with {given_up}, the settings that worked after this model ran out of memory last time (Try full settings again, or `draftwise launch --full`, goes back to the full settings).</source>
      <translation>前回このモデルがメモリ不足になった後に動いた設定（{given_up}）で起動します（「本来の設定でもう一度試す」または `draftwise launch --full` で本来の設定に戻ります）。</translation>
    </message>
    <message>
      <location filename="../../app/draftwise/core/launch/ladder_record.py" line="72" />
      <source>record of lowered settings</source>
      <translation>下げた設定の記録</translation>
    </message>
    <message>
      <location filename="../../app/draftwise/core/launch/ladder_record.py" line="123" />
      <source>Could not remember the lowered settings ({error}); the next launch will try the full settings first.</source>
      <translation>下げた設定を記録できませんでした（{error}）。次の起動はまず本来の設定で試します。</translation>
    </message>
    <message>
      <location filename="../../app/draftwise/core/launch/ladder_record.py" line="125" />
      <source>The engine started with {given_up}; the next launch of this model starts there (Try full settings again undoes it).</source>
      <translation>エンジンは {given_up} で起動しました。このモデルの次の起動はこの設定から始めます（「本来の設定でもう一度試す」で元に戻せます）。</translation>
    </message>
    <message>
      <location filename="../../app/draftwise/core/launch/launch_flow.py" line="490" />
      <source>the model's MTP head</source>
      <translation>モデルの MTP ヘッド</translation>
    </message>
    <message>
      <location filename="../../app/draftwise/core/launch/launch_flow.py" line="492" />
      <source>{type} speculation</source>
      <translation>{type} 投機的デコード</translation>
    </message>
    <message>
      <location filename="../../app/draftwise/core/launch/launch_flow.py" line="496" />
      <source>{what} made the engine stop while it was serving, so it was started again without speculation.</source>
      <translation>{what} が原因で、応答中にエンジンが止まりました。投機的デコードなしで起動し直しました。</translation>
    </message>
    <message>
      <location filename="../../app/draftwise/core/launch/launch_flow.py" line="499" />
      <source>The engine could not start with {what}, so it was started again without speculation.</source>
      <translation>{what} ではエンジンを起動できなかったため、推測なしで起動し直しました。</translation>
    </message>
    <message>
      <location filename="../../app/draftwise/core/launch/launch_flow.py" line="535" />
      <source>Could not remember the engine fix ({error}); the next launch may crash once more.</source>
      <translation>エンジンの修正を記録できませんでした（{error}）。次の起動でもう一度落ちるかもしれません。</translation>
    </message>
    <message>
      <location filename="../../app/draftwise/core/launch/launch_flow.py" line="548" />
      <source>Could not remember the broken drafter ({error}); the next launch will try it again.</source>
      <translation>動かなかったドラフターを記録できませんでした（{error}）。次回の起動でもう一度試します。</translation>
    </message>
    <message>
      <location filename="../../app/draftwise/core/launch/launch_flow.py" line="551" />
      <source>The engine started without {what}, so it will be left out from now on.</source>
      <translation>{what}なしならエンジンが起動したので、今後は使いません。</translation>
    </message>
    <message>
      <location filename="../../app/draftwise/core/launch/launch_spec.py" line="45" />
      <source>Use the network setting instead of --host.</source>
      <translation>--host の代わりにネットワーク設定を使ってください。</translation>
    </message>
    <message>
      <location filename="../../app/draftwise/core/launch/launch_spec.py" line="46" />
      <source>Use the Port field instead of --port.</source>
      <translation>--port の代わりにポート欄を使ってください。</translation>
    </message>
    <message>
      <location filename="../../app/draftwise/core/launch/launch_spec.py" line="47" />
      <source>Keys on the command line are visible to every user (ps); Draftwise passes its key in the environment.</source>
      <translation>コマンドラインに書いたキーはすべてのユーザーから見えます（ps）。Draftwise はキーを環境変数で渡します。</translation>
    </message>
    <message>
      <location filename="../../app/draftwise/core/launch/launch_spec.py" line="119" />
      <source>GPU {index} ({name}) has no kernels in this engine build; it is left out.</source>
      <translation>GPU {index}（{name}）用のカーネルがこのエンジンにないため、使いません。</translation>
    </message>
    <message>
      <location filename="../../app/draftwise/core/launch/launch_spec.py" line="125" />
      <source>GPU {index} ({name}) has no kernels in this engine build; it is hidden from the engine.</source>
      <translation>GPU {index}（{name}）用のカーネルがこのエンジンにないため、エンジンから隠します。</translation>
    </message>
    <message>
      <location filename="../../app/draftwise/core/launch/launch_spec.py" line="130" />
      <source>The integrated GPU {index} ({name}) is hidden: the dedicated GPU is faster and the pair often fails to start.</source>
      <translation>内蔵 GPU {index}（{name}）は隠します: 専用 GPU のほうが速く、両方を使うと起動に失敗しやすいためです。</translation>
    </message>
    <message>
      <location filename="../../app/draftwise/core/launch/launch_spec.py" line="135" />
      <source>This engine build has kernels for none of these GPUs; install a build for them.</source>
      <translation>このエンジンには、どの GPU 用のカーネルもありません。これらの GPU に合うエンジンをインストールしてください。</translation>
    </message>
    <message>
      <location filename="../../app/draftwise/core/launch/launch_spec.py" line="169" />
      <source>GPU {index} ({target}) needs a different gfx override than GPU {other}; it is hidden.</source>
      <translation>GPU {index}（{target}）は GPU {other} と違う gfx 上書き設定が必要なため、隠します。</translation>
    </message>
    <message>
      <location filename="../../app/draftwise/core/launch/launch_spec.py" line="188" />
      <source>{targets} runs on the kernels of {kernels} (HSA_OVERRIDE_GFX_VERSION={version}).</source>
      <translation>{targets} は {kernels} のカーネルで動かします（HSA_OVERRIDE_GFX_VERSION={version}）。</translation>
    </message>
    <message>
      <location filename="../../app/draftwise/core/launch/launch_spec.py" line="215" />
      <source>Port {port} is not a TCP port; choose one between 1 and 65535.</source>
      <translation>ポート {port} は TCP ポートとして使えません。1 から 65535 の間で選んでください。</translation>
    </message>
    <message>
      <location filename="../../app/draftwise/core/launch/launch_spec.py" line="221" />
      <source>Port {port} is in use by another program; choose another port or stop that program.</source>
      <translation>ポート {port} は別のプログラムが使っています。別のポートを選ぶか、そのプログラムを止めてください。</translation>
    </message>
    <message>
      <location filename="../../app/draftwise/core/launch/launch_spec.py" line="224" />
      <source>Port {port} is in use; the engine listens on {other} instead.</source>
      <translation>ポート {port} は使用中です。代わりにポート {other} で待ち受けます。</translation>
    </message>
    <message>
      <location filename="../../app/draftwise/core/launch/launch_spec.py" line="253" />
      <source>Other computers reach it at {urls}.</source>
      <translation>ほかのコンピューターからは {urls} で接続できます。</translation>
    </message>
    <message>
      <location filename="../../app/draftwise/core/launch/launch_spec.py" line="257" />
      <source>The engine accepts connections from other computers on port {port}. Anyone on your network who has the API key can use it; keep the key private.</source>
      <translation>エンジンはポート {port} でほかのコンピューターからの接続を受け付けます。API キーを知っていれば、ネットワーク上の誰でも使えます。キーは人に教えないでください。</translation>
    </message>
    <message>
      <location filename="../../app/draftwise/core/launch/launch_spec.py" line="356" />
      <source>Speculative settings are for llama.cpp; {kind} decides speculation itself.</source>
      <translation>投機的デコードの設定は llama.cpp 用です。{kind} は投機的デコードを自分で決めます。</translation>
    </message>
    <message>
      <location filename="../../app/draftwise/core/launch/launch_spec.py" line="364" />
      <source>Extra engine arguments may not contain {flag}. {why}</source>
      <translation>エンジンの追加引数に {flag} は使えません。{why}</translation>
    </message>
    <message>
      <location filename="../../app/draftwise/core/launch/launch_spec.py" line="400" />
      <source>{path} exists: llama.cpp applies it to every launch before the command line, so any setting in it that Draftwise does not set itself changes what runs. Remove it or empty it.</source>
      <translation>{path} があります。llama.cpp はコマンドラインより先にこれをすべての起動に適用するため、Draftwise が設定しない項目は実行内容を変えてしまいます。削除するか空にしてください。</translation>
    </message>
    <message>
      <location filename="../../app/draftwise/core/launch/launch_spec.py" line="465" />
      <source>An engine open to the network needs an API key; leave the key field to Draftwise or enter one.</source>
      <translation>ネットワークに公開するエンジンには API キーが必要です。キー欄を Draftwise に任せるか、キーを入力してください。</translation>
    </message>
    <message>
      <location filename="../../app/draftwise/core/launch/llamacpp.py" line="131" />
      <source>The engine command would set {flags} twice; remove it from the extra arguments.</source>
      <translation>エンジンのコマンドで {flags} が 2 回指定されます。追加の引数から削除してください。</translation>
    </message>
    <message>
      <location filename="../../app/draftwise/core/launch/lost_worker.py" line="35" />
      <source>{workers} went away during the last run; Draftwise launched again without it.</source>
      <translation>前回の実行中に {workers} が応答しなくなったため、Draftwise はそれを除いて再起動しました。</translation>
    </message>
    <message>
      <location filename="../../app/draftwise/core/launch/lost_worker.py" line="40" />
      <source>The model does not fit on what is left without {workers}: start ggml-rpc-server there again, then Launch.</source>
      <translation>{workers} なしでは残りの構成にモデルが収まりません。そのコンピューターで ggml-rpc-server を再び起動してから「起動」を押してください。</translation>
    </message>
    <message>
      <location filename="../../app/draftwise/core/launch/mlx.py" line="51" />
      <source>mlx-lm's server has no API key, so Draftwise keeps it on this computer only.</source>
      <translation>mlx-lm のサーバーには API キーがないため、Draftwise はこのコンピューターの中だけで使います。</translation>
    </message>
    <message>
      <location filename="../../app/draftwise/core/launch/mlx.py" line="55" />
      <source>mlx-lm sizes its context itself; the context setting is not passed on.</source>
      <translation>mlx-lm はコンテキストの大きさを自分で決めます。コンテキストの設定は渡しません。</translation>
    </message>
    <message>
      <location filename="../../app/draftwise/core/launch/owned_args.py" line="25" />
      <source>Draftwise splits the model across GPUs by their free memory; remove {flag}.</source>
      <translation>Draftwise は空きメモリに応じてモデルを GPU に分割します。{flag} を削除してください。</translation>
    </message>
    <message>
      <location filename="../../app/draftwise/core/launch/owned_args.py" line="27" />
      <source>Draftwise places the model's tensors itself (it writes -ot for the feed-forward weights it keeps on the CPU) and cannot plan {flag}; remove it (use -ngl, --n-cpu-moe or --n-cpu-ffn to keep part of the model off the GPU).</source>
      <translation>Draftwise はモデルのテンソルを自分で配置し（CPU に置くフィードフォワードの重みには -ot を自分で書きます）、{flag} は計画できません。削除してください（モデルの一部を GPU から外すには -ngl、--n-cpu-moe か --n-cpu-ffn を使います）。</translation>
    </message>
    <message>
      <location filename="../../app/draftwise/core/launch/owned_args.py" line="31" />
      <source>Draftwise keeps the KV cache beside the layers it belongs to and cannot plan {flag}; remove it.</source>
      <translation>Draftwise は KV キャッシュを対応するレイヤーと同じ場所に置くため、{flag} は計画できません。削除してください。</translation>
    </message>
    <message>
      <location filename="../../app/draftwise/core/launch/owned_args.py" line="33" />
      <source>Draftwise plans one KV cache per slot and cannot plan {flag}; remove it.</source>
      <translation>Draftwise はスロットごとに KV キャッシュを 1 つ計画するため、{flag} は計画できません。削除してください。</translation>
    </message>
    <message>
      <location filename="../../app/draftwise/core/launch/owned_args.py" line="35" />
      <source>Draftwise decides the GPU offload itself and sets --fit; remove {flag} (use -ngl or --n-cpu-moe to fix the split yourself).</source>
      <translation>Draftwise は GPU へのオフロードを自分で決め、--fit も設定します。{flag} を削除してください（分割を自分で決めるには -ngl か --n-cpu-moe を使います）。</translation>
    </message>
    <message>
      <location filename="../../app/draftwise/core/launch/owned_args.py" line="38" />
      <source>Draftwise sets the memory left free on each GPU (--fit-target); remove {flag}.</source>
      <translation>Draftwise は各 GPU に残す空きメモリ（--fit-target）を設定します。{flag} を削除してください。</translation>
    </message>
    <message>
      <location filename="../../app/draftwise/core/launch/owned_args.py" line="40" />
      <source>Draftwise plans the context itself; remove {flag} and use the Context field (--ctx).</source>
      <translation>Draftwise はコンテキストを自分で計画します。{flag} を削除し、コンテキスト欄（--ctx）を使ってください。</translation>
    </message>
    <message>
      <location filename="../../app/draftwise/core/launch/owned_args.py" line="42" />
      <source>Draftwise shows the memory plan itself; remove {flag}.</source>
      <translation>Draftwise はメモリ計画を自分で表示します。{flag} を削除してください。</translation>
    </message>
    <message>
      <location filename="../../app/draftwise/core/launch/owned_args.py" line="43" />
      <source>Draftwise keeps the draft model on this computer; remove {flag}.</source>
      <translation>Draftwise はドラフトモデルをこのコンピューターに置きます。{flag} を削除してください。</translation>
    </message>
    <message>
      <location filename="../../app/draftwise/core/launch/owned_args.py" line="45" />
      <source>Draftwise asks the other computers and plans for them itself: remove {flag} and list them under Other computers (draftwise launch --rpc host:port,...).</source>
      <translation>Draftwise は他のコンピューターに問い合わせて自分で計画します。{flag} を削除し、「他のコンピューター」に追加してください（draftwise launch --rpc host:port,...）。</translation>
    </message>
    <message>
      <location filename="../../app/draftwise/core/launch/owned_args.py" line="49" />
      <source>Draftwise chooses the devices and plans for them; remove {flag} and pick the device in the Device field (draftwise launch --device NAME).</source>
      <translation>Draftwise が使うデバイスを選び、それに合わせて計画します。{flag} を削除し、デバイス欄で選んでください（draftwise launch --device NAME）。</translation>
    </message>
    <message>
      <location filename="../../app/draftwise/core/launch/owned_args.py" line="52" />
      <source>Draftwise chooses the GPUs; remove {flag} and pick the device in the Device field (draftwise launch --device NAME).</source>
      <translation>Draftwise が GPU を選びます。{flag} を削除し、デバイス欄で選んでください（draftwise launch --device NAME）。</translation>
    </message>
    <message>
      <location filename="../../app/draftwise/core/launch/owned_args.py" line="55" />
      <source>Draftwise plans one KV cache per slot and cannot plan {flag}; remove it and set the context per slot in the Context field.</source>
      <translation>Draftwise はスロットごとに KV キャッシュを 1 つ計画するため、{flag} は計画できません。削除して、スロットあたりのコンテキストをコンテキスト欄で指定してください。</translation>
    </message>
    <message>
      <location filename="../../app/draftwise/core/launch/owned_args.py" line="61" />
      <source>The drafter's KV cache follows the KV cache field; remove {flag} and use the KV cache field (--kv).</source>
      <translation>ドラフターの KV キャッシュは KV キャッシュ欄に従います。{flag} を削除し、KV キャッシュ欄（--kv）を使ってください。</translation>
    </message>
    <message>
      <location filename="../../app/draftwise/core/launch/owned_args.py" line="65" />
      <source>Draftwise places the draft model with the main model; remove {flag}.</source>
      <translation>Draftwise はドラフトモデルをメインモデルと同じ場所に置きます。{flag} を削除してください。</translation>
    </message>
    <message>
      <location filename="../../app/draftwise/core/launch/owned_args.py" line="69" />
      <source>Draftwise runs the models in your library, so the engine downloads nothing; remove {flag}, get the model with Get models… (draftwise get REPO) and choose it.</source>
      <translation>Draftwise はライブラリのモデルを動かすので、エンジンは何もダウンロードしません。{flag} を削除し、「モデルを入手…」（draftwise get REPO）でモデルを入手して選んでください。</translation>
    </message>
    <message>
      <location filename="../../app/draftwise/core/launch/owned_args.py" line="74" />
      <source>Draftwise plans the layer split across the GPUs it uses; to use one GPU, remove {flag} none and pick it in the Device field (draftwise launch --device NAME).</source>
      <translation>Draftwise は使う GPU 間でレイヤーを分けて計画します。GPU を 1 つだけ使うには、{flag} none を削除してデバイス欄で選んでください（draftwise launch --device NAME）。</translation>
    </message>
    <message>
      <location filename="../../app/draftwise/core/launch/owned_args.py" line="77" />
      <source>Draftwise plans the layer split and cannot plan {flag} row; remove it.</source>
      <translation>Draftwise はレイヤー単位の分割を計画するため、{flag} row は計画できません。削除してください。</translation>
    </message>
    <message>
      <location filename="../../app/draftwise/core/launch/owned_args.py" line="78" />
      <source>Draftwise fits the model with the engine's --fit, which aborts with {flag} tensor (common/fit.cpp: not implemented for it); remove it.</source>
      <translation>Draftwise はエンジンの --fit でモデルを収めますが、{flag} tensor では --fit が中断します（common/fit.cpp: 未実装）。削除してください。</translation>
    </message>
    <message>
      <location filename="../../app/draftwise/core/launch/owned_args.py" line="114" />
      <source>{flag} needs a whole number, not '{value}'.</source>
      <translation>{flag} には '{value}' ではなく整数が必要です。</translation>
    </message>
    <message>
      <location filename="../../app/draftwise/core/launch/owned_args.py" line="116" />
      <source>{flag} must be at least {least}.</source>
      <translation>{flag} は {least} 以上にしてください。</translation>
    </message>
    <message>
      <location filename="../../app/draftwise/core/launch/owned_args.py" line="121" />
      <source>{flag} {given} in the extra arguments and {planned} in the {field} field disagree; clear one of them.</source>
      <translation>追加の引数の {flag} {given} と {field} 欄の {planned} が食い違っています。どちらかを消してください。</translation>
    </message>
    <message>
      <location filename="../../app/draftwise/core/launch/owned_args.py" line="142" />
      <source>{flag} is given twice with different values ({a} and {b}); keep one.</source>
      <translation>{flag} が異なる値（{a} と {b}）で 2 回指定されています。1 つにしてください。</translation>
    </message>
    <message>
      <location filename="../../app/draftwise/core/launch/owned_args.py" line="164" />
      <source>{flag} 0 means the model's trained context, which this file does not state; give the context as a number.</source>
      <translation>{flag} 0 はモデルの学習時のコンテキスト長を意味しますが、このファイルには記載がありません。コンテキストを数値で指定してください。</translation>
    </message>
    <message>
      <location filename="../../app/draftwise/core/launch/owned_args.py" line="178" />
      <source>{flag} alone cannot be planned: Draftwise gives the K and V caches one type. Use the KV cache field (--kv), or give {missing} the same type.</source>
      <translation>{flag} だけでは計画できません。Draftwise は K と V のキャッシュに同じ型を使います。KV キャッシュ欄（--kv）を使うか、{missing} に同じ型を指定してください。</translation>
    </message>
    <message>
      <location filename="../../app/draftwise/core/launch/owned_args.py" line="182" />
      <source>-ctk {k} and -ctv {v} differ: Draftwise gives the K and V caches one type. Use the KV cache field (--kv).</source>
      <translation>-ctk {k} と -ctv {v} が異なります。Draftwise は K と V のキャッシュに同じ型を使います。KV キャッシュ欄（--kv）を使ってください。</translation>
    </message>
    <message>
      <location filename="../../app/draftwise/core/launch/owned_args.py" line="185" />
      <source>{flag} {value} is not a KV cache type; use one of {known}.</source>
      <translation>{flag} {value} は KV キャッシュの型ではありません。{known} のいずれかを使ってください。</translation>
    </message>
    <message>
      <location filename="../../app/draftwise/core/launch/owned_args.py" line="194" />
      <source>{flag} takes on, off or auto, not '{value}'.</source>
      <translation>{flag} には '{value}' ではなく on、off、auto のいずれかを指定します。</translation>
    </message>
    <message>
      <location filename="../../app/draftwise/core/launch/owned_args.py" line="210" />
      <source>--cpu-moe and {flag} {n} both set where the experts go; keep one.</source>
      <translation>--cpu-moe と {flag} {n} の両方がエキスパートの置き場所を指定しています。どちらか一方にしてください。</translation>
    </message>
    <message>
      <location filename="../../app/draftwise/core/launch/owned_args.py" line="223" />
      <source>{flag} takes none, layer, row or tensor, not '{value}'.</source>
      <translation>{flag} には none、layer、row、tensor のいずれかを指定します（'{value}' は使えません）。</translation>
    </message>
    <message>
      <location filename="../../app/draftwise/core/launch/prepare.py" line="190" />
      <source>{name} is a drafter ({kind}), not a model to run; choose the full model, and put this file in the Draft model field or beside the model.</source>
      <translation>{name} はドラフター（{kind}）で、単独で動かすモデルではありません。本体のモデルを選び、このファイルはドラフトモデル欄に入れるか、モデルの隣に置いてください。</translation>
    </message>
    <message>
      <location filename="../../app/draftwise/core/launch/prepare.py" line="197" />
      <source>{name}: missing part(s) {parts}; download them into the same folder.</source>
      <translation>{name}: 分割ファイル {parts} がありません。同じフォルダーにダウンロードしてください。</translation>
    </message>
    <message>
      <location filename="../../app/draftwise/core/launch/prepare.py" line="265" />
      <source>it does not fit this machine's memory</source>
      <translation>このマシンのメモリーに収まりません</translation>
    </message>
    <message>
      <location filename="../../app/draftwise/core/launch/prepare.py" line="266" />
      <source>The sweep measured {name} fastest, but it does not fit now ({why}); the drafter the rules chose runs instead.</source>
      <translation>すべての設定の測定では {name} が最速でしたが、今は収まりません（{why}）。規則で選んだドラフターを代わりに使います。</translation>
    </message>
    <message>
      <location filename="../../app/draftwise/core/launch/prepare.py" line="380" />
      <source>No drafter found; n-gram speculation measured faster on this computer, so it is on.</source>
      <translation>ドラフトモデルは見つかりませんでしたが、このコンピューターでは n-gram 投機の方が速いと計測されたので、オンにしています。</translation>
    </message>
    <message>
      <location filename="../../app/draftwise/core/launch/prepare.py" line="402" />
      <source>The sweep measured {name} fastest, but it is no longer a suitable drafter here (changed, moved or it failed); the drafter the rules chose runs instead.</source>
      <translation>すべての設定の測定では {name} が最速でしたが、もう使えるドラフターではありません（変更・移動されたか、失敗しました）。規則で選んだドラフターを代わりに使います。</translation>
    </message>
    <message>
      <location filename="../../app/draftwise/core/launch/prepare.py" line="406" />
      <source>Chosen by the sweep: {name} drafted fastest on this computer, ahead of {rules}, the drafter the rules pick.</source>
      <translation>すべての設定の測定で選択: このコンピューターでは {name} が、規則で選ぶドラフター {rules} より速くドラフトしました。</translation>
    </message>
    <message>
      <location filename="../../app/draftwise/core/launch/prepare.py" line="421" />
      <source>the model's own MTP head</source>
      <translation>モデル自身の MTP ヘッド</translation>
    </message>
    <message>
      <location filename="../../app/draftwise/core/launch/session.py" line="279" />
      <source>The link to {worker} could not be measured ({why}); it is used as listed.</source>
      <translation>ワーカー {worker} への回線を測定できませんでした（{why}）。指定どおりに使います。</translation>
    </message>
    <message>
      <location filename="../../app/draftwise/core/launch/session.py" line="284" />
      <source>The speed of {worker} could not be measured ({why}); it is predicted at this computer's speed.</source>
      <translation>ワーカー {worker} の計算速度を測定できませんでした（{why}）。このコンピューターと同じ速度として予測します。</translation>
    </message>
    <message>
      <location filename="../../app/draftwise/core/launch/session.py" line="324" />
      <source>{worker} is not used: this computer's speed could not be measured, so it cannot be weighed, and the model fits without it.</source>
      <translation>{worker} は使いません。このコンピューターの速度を測定できなかったため比べることができず、モデルはそれなしで収まります。</translation>
    </message>
    <message>
      <location filename="../../app/draftwise/core/launch/session.py" line="331" />
      <source>This computer's speed could not be measured, so the workers are used only because the model does not fit without them.</source>
      <translation>このコンピューターの速度を測定できませんでした。モデルがワーカーなしでは収まらないため、ワーカーを使います。</translation>
    </message>
    <message>
      <location filename="../../app/draftwise/core/launch/session.py" line="345" />
      <source>{worker} would not make it faster here ({mbit} Mbit/s, {rtt} ms): not used.</source>
      <translation>{worker} を使ってもこのコンピューターでは速くなりません（{mbit} Mbit/s、{rtt} ms）。使いません。</translation>
    </message>
    <message>
      <location filename="../../app/draftwise/core/launch/session.py" line="347" />
      <source>{worker} would make it slower here ({mbit} Mbit/s, {rtt} ms): not used.</source>
      <translation>{worker} を使うとこのコンピューターでは遅くなります（{mbit} Mbit/s、{rtt} ms）。使いません。</translation>
    </message>
    <message>
      <location filename="../../app/draftwise/core/launch/vllm.py" line="116" />
      <source>An engine open to the network needs an API key.</source>
      <translation>ネットワークに公開するエンジンには API キーが必要です。</translation>
    </message>
    <message>
      <location filename="../../app/draftwise/core/machine/hardware.py" line="82" />
      <source>Only a software Vulkan device was found ({name}); it runs on the CPU and is slower than the CPU engine, so it is used only when you choose it.</source>
      <translation>ソフトウェアの Vulkan デバイス（{name}）しか見つかりませんでした。CPU で動き CPU 版エンジンより遅いため、選んだときだけ使われます。</translation>
    </message>
    <message>
      <location filename="../../app/draftwise/core/machine/speed.py" line="295" />
      <source>record of this computer's speed</source>
      <translation>このコンピューターの速度の記録</translation>
    </message>
    <message>
      <location filename="../../app/draftwise/core/machine/speed.py" line="343" />
      <source>This computer was busy when its speed was measured, so these speeds may be low; Draftwise measures again when it is quieter.</source>
      <translation>速度を測ったときこのコンピューターは忙しかったため、これらの速度は低めかもしれません。空いているときに Draftwise がもう一度測ります。</translation>
    </message>
    <message>
      <location filename="../../app/draftwise/core/machine/speed.py" line="349" />
      <source>This computer's speed was measured but could not be kept ({error}); the speeds use it for now, and Draftwise measures again next time.</source>
      <translation>このコンピューターの速度は測れましたが、保存できませんでした（{error}）。今はこの値で速度を示し、次回 Draftwise がもう一度測ります。</translation>
    </message>
    <message>
      <location filename="../../app/draftwise/core/measurements/learned.py" line="46" />
      <source>{setup} stays: nothing measured beat it beyond the noise on your requests ({ratio}×, measured again on {n} of them)</source>
      <translation>{setup} のままです: あなたのリクエストでは、測ったどの設定もノイズを超えて速くはありませんでした（{ratio}×、そのうち {n} 件で測り直しました）</translation>
    </message>
    <message>
      <location filename="../../app/draftwise/core/measurements/learned.py" line="48" />
      <source>{setup} is faster on your requests: {ratio}× vs {before_ratio}× with {before}</source>
      <translation>あなたのリクエストでは {setup} のほうが速い: {ratio}×（{before} は {before_ratio}×）</translation>
    </message>
    <message>
      <location filename="../../app/draftwise/core/measurements/learned.py" line="56" />
      <source>n-gram speculation is not faster on your requests ({ratio}×, noise ±{noise} %; measured again on {n} of them), so it stays off</source>
      <translation>あなたのリクエストでは n-gram 投機は速くなりません（{ratio}×、ノイズ ±{noise} %。そのうち {n} 件で測り直しました）。そのためオフのままです</translation>
    </message>
    <message>
      <location filename="../../app/draftwise/core/measurements/live_figures.py" line="142" />
      <source>no tokens generated yet</source>
      <translation>まだトークンは生成されていません</translation>
    </message>
    <message>
      <location filename="../../app/draftwise/core/measurements/live_figures.py" line="145" />
      <source>generating: {tps} tokens/s</source>
      <translation>生成中: {tps} トークン/秒</translation>
    </message>
    <message>
      <location filename="../../app/draftwise/core/measurements/live_figures.py" line="146" />
      <source>drafting: acceptance {pct} % · mean accepted length {n} · {tps} tokens/s</source>
      <translation>ドラフト: 採用率 {pct} % · 平均採用長 {n} · {tps} トークン/秒</translation>
    </message>
    <message>
      <location filename="../../app/draftwise/core/measurements/live_figures.py" line="198" />
      <source>{type} {share} % ({accepted} % accepted)</source>
      <translation>{type} {share} %（採用 {accepted} %）</translation>
    </message>
    <message>
      <location filename="../../app/draftwise/core/measurements/live_figures.py" line="201" />
      <source>drafted tokens by type: {parts}</source>
      <translation>種類別の下書きトークン: {parts}</translation>
    </message>
    <message>
      <location filename="../../app/draftwise/core/measurements/live_figures.py" line="236" />
      <source>The engine started without {what}: its slots report no speculative decoding, so generation runs at the plain speed. The engine log says why.</source>
      <translation>エンジンは{what}なしで起動しました。スロットが投機的デコードなしと報告しているため、生成は通常の速度です。理由はエンジンのログにあります。</translation>
    </message>
    <message>
      <location filename="../../app/draftwise/core/measurements/measured.py" line="100" />
      <source>measured slower: {ratio}× — started without {what}</source>
      <translation>測定で遅くなりました: {ratio}× — {what}なしで起動しました</translation>
    </message>
    <message>
      <location filename="../../app/draftwise/core/measurements/measured.py" line="105" />
      <source>measured {ratio}× with {what} ({setup}, the fastest tried)</source>
      <translation>測定結果: {what}で {ratio}×（{setup}、試した中で最速）</translation>
    </message>
    <message>
      <location filename="../../app/draftwise/core/measurements/measured.py" line="116" />
      <source>measured slower: {ratio}× with {what}; it stays because you chose it</source>
      <translation>測定で遅くなりました: {what}で {ratio}×。ご自身で選んだものなので使い続けます</translation>
    </message>
    <message>
      <location filename="../../app/draftwise/core/measurements/measured.py" line="119" />
      <source>measured {ratio}× with {what}; draft length {n} (the fastest tried)</source>
      <translation>測定結果: {what}で {ratio}×。ドラフト長 {n}（試した中で最速）</translation>
    </message>
    <message>
      <location filename="../../app/draftwise/core/measurements/measured.py" line="122" />
      <source>measured {ratio}× with {what}</source>
      <translation>測定結果: {what}で {ratio}×</translation>
    </message>
    <message>
      <location filename="../../app/draftwise/core/measurements/measured.py" line="182" />
      <source>Only {pct} % of drafted tokens are accepted; drafting pays only above about {be} %, so speculation is slowing this model down.</source>
      <translation>ドラフトしたトークンのうち採用されたのは {pct} % だけです。ドラフトが得になるのは約 {be} % 以上なので、投機的デコードがこのモデルを遅くしています。</translation>
    </message>
    <message>
      <location filename="../../app/draftwise/core/measurements/measured.py" line="200" />
      <source>record of speed measurements</source>
      <translation>速度測定の記録</translation>
    </message>
    <message>
      <location filename="../../app/draftwise/core/measurements/measurement.py" line="129" />
      <source>{ratio}× with {what} ({with_tps} vs {without_tps} tokens/s, noise ±{noise} %)</source>
      <translation>{what}で {ratio}×（{with_tps} 対 {without_tps} トークン/秒、ばらつき ±{noise} %）</translation>
    </message>
    <message>
      <location filename="../../app/draftwise/core/measurements/prompt_log.py" line="153" />
      <source>Your prompts could not be kept for measuring on your own work ({error}).</source>
      <translation>あなたの作業での計測用にプロンプトを保存できませんでした（{error}）。</translation>
    </message>
    <message>
      <location filename="../../app/draftwise/core/measurements/sweep_record.py" line="137" />
      <source>no setup was measured</source>
      <translation>測定した設定はありません</translation>
    </message>
    <message>
      <location filename="../../app/draftwise/core/measurements/sweep_record.py" line="138" />
      <source>fastest of {n} setups: {setup}, {ratio}× ({with_tps} vs {without_tps} tokens/s)</source>
      <translation>{n} 通りの設定で最速: {setup}、{ratio}×（{with_tps} 対 {without_tps} トークン/秒）</translation>
    </message>
    <message>
      <location filename="../../app/draftwise/core/measurements/sweep_record.py" line="188" />
      <source>record of speculation sweeps</source>
      <translation>投機設定の総当たり測定の記録</translation>
    </message>
    <message>
      <location filename="../../app/draftwise/core/measurements/tuned.py" line="171" />
      <source>{setting}: prompts read {pct} % faster here, measured ({prompt} against {base} tokens/s)</source>
      <translation>{setting}: このコンピューターではプロンプトの読み込みが {pct} % 速いと測定されました（{prompt} 対 {base} トークン/秒）</translation>
    </message>
    <message>
      <location filename="../../app/draftwise/core/measurements/tuned.py" line="175" />
      <source>{setting}: {pct} % faster here, measured ({decode} against {base_decode} tokens/s written, {prompt} against {base_prompt} read)</source>
      <translation>{setting}: このコンピューターでは {pct} % 速いと測定されました（生成 {decode} 対 {base_decode} トークン/秒、読み込み {prompt} 対 {base_prompt}）</translation>
    </message>
    <message>
      <location filename="../../app/draftwise/core/measurements/tuned.py" line="181" />
      <source>Together: {pct} % faster than the engine's own settings, measured side by side.</source>
      <translation>組み合わせると、エンジン既定の設定より {pct} % 速いと、並べて測定されました。</translation>
    </message>
    <message>
      <location filename="../../app/draftwise/core/measurements/tuned.py" line="187" />
      <source>Engine settings: the engine's own are kept; {others} did not beat them beyond the noise on most prompts here.</source>
      <translation>エンジン設定: エンジン既定の設定のままです。このコンピューターでは {others} が、ほとんどのプロンプトでノイズを超えて速くはありませんでした。</translation>
    </message>
    <message>
      <location filename="../../app/draftwise/core/measurements/tuned.py" line="214" />
      <source>weights not repacked (-nr)</source>
      <translation>重みを再配置しない（-nr）</translation>
    </message>
    <message>
      <location filename="../../app/draftwise/core/measurements/tuned.py" line="214" />
      <source>weights repacked</source>
      <translation>重みを再配置する</translation>
    </message>
    <message>
      <location filename="../../app/draftwise/core/measurements/tuned.py" line="216" />
      <source>engine threads {n} (-t)</source>
      <translation>エンジンのスレッド数 {n}（-t）</translation>
    </message>
    <message>
      <location filename="../../app/draftwise/core/measurements/tuned.py" line="218" />
      <source>engine threads for prompts {n} (-tb)</source>
      <translation>プロンプト処理のスレッド数 {n}（-tb）</translation>
    </message>
    <message>
      <location filename="../../app/draftwise/core/measurements/tuned.py" line="220" />
      <source>flash attention {state} (-fa)</source>
      <translation>Flash Attention {state}（-fa）</translation>
    </message>
    <message>
      <location filename="../../app/draftwise/core/measurements/tuned.py" line="222" />
      <source>prompt batch {n} (-ub)</source>
      <translation>プロンプトのバッチ {n}（-ub）</translation>
    </message>
    <message>
      <location filename="../../app/draftwise/core/measurements/tuned.py" line="223" />
      <source>{flag} {value}</source>
      <translation>{flag} {value}</translation>
    </message>
    <message>
      <location filename="../../app/draftwise/core/measurements/tuned.py" line="279" />
      <source>record of engine settings</source>
      <translation>エンジン設定の記録</translation>
    </message>
    <message>
      <location filename="../../app/draftwise/core/measurements/usage.py" line="175" />
      <source>record of your requests' speed</source>
      <translation>あなたのリクエストの速度の記録</translation>
    </message>
    <message>
      <location filename="../../app/draftwise/core/measurements/usage.py" line="178" />
      <source>record of your prompts</source>
      <translation>あなたのプロンプトの記録</translation>
    </message>
    <message>
      <location filename="../../app/draftwise/core/measurements/usage.py" line="266" />
      <source>Your prompt could not be kept for measuring on your own work ({error}).</source>
      <translation>あなたの作業での計測用にプロンプトを保存できませんでした（{error}）。</translation>
    </message>
    <message>
      <location filename="../../app/draftwise/core/measurements/usage.py" line="278" />
      <source>Your kept prompts could not be deleted from {path}: {error}. Delete that file by hand.</source>
      <translation>保存したプロンプトを {path} から削除できませんでした: {error}。このファイルを手動で削除してください。</translation>
    </message>
    <message>
      <location filename="../../app/draftwise/core/measurements/usage.py" line="283" />
      <source>The prompts the engine logged could not be deleted from {path}: {error}. Delete that folder by hand.</source>
      <translation>エンジンが記録したプロンプトを {path} から削除できませんでした: {error}。このフォルダーを手動で削除してください。</translation>
    </message>
    <message>
      <location filename="../../app/draftwise/core/measurements/usage.py" line="415" />
      <source>Your requests' figures could not be kept ({error}); learning from use misses them.</source>
      <translation>リクエストの数値を保存できませんでした（{error}）。使用からの学習にはこれらが含まれません。</translation>
    </message>
    <message>
      <location filename="../../app/draftwise/core/measurements/usage_check.py" line="110" />
      <source>{kept} ran {live} tokens/s on your last {n} requests; {other} reached {tps} when measured</source>
      <translation>{kept} は直近 {n} 件のリクエストで {live} トークン/秒でした。測定では {other} が {tps} に達しています</translation>
    </message>
    <message>
      <location filename="../../app/draftwise/core/measurements/usage_check.py" line="116" />
      <source>{kept} accepted {pct} % of its drafts on your last {n} requests, {was} % when measured</source>
      <translation>{kept} は直近 {n} 件のリクエストでドラフトの {pct} % が採用されました（測定時は {was} %）</translation>
    </message>
    <message>
      <location filename="../../app/draftwise/core/measurements/usage_check.py" line="122" />
      <source>your prompts repeat themselves ({pct} % of their words follow a phrase seen before), which n-gram drafting predicts, and {kept} drafts none of it</source>
      <translation>あなたのプロンプトには繰り返しが多く（単語の {pct} % が既出の語句に続きます）、n-gram ドラフトが予測できる内容ですが、{kept} はそれをドラフトしません</translation>
    </message>
    <message>
      <location filename="../../app/draftwise/core/measuring/arms.py" line="191" />
      <source>measured</source>
      <translation>測定完了</translation>
    </message>
    <message>
      <location filename="../../app/draftwise/core/measuring/arms.py" line="318" />
      <source>There is no speculation to measure for this model: {why}</source>
      <translation>このモデルには測定する投機的デコードがありません: {why}</translation>
    </message>
    <message>
      <location filename="../../app/draftwise/core/measuring/arms.py" line="322" />
      <source>The model does not fit this machine.</source>
      <translation>このモデルはこのマシンに収まりません。</translation>
    </message>
    <message>
      <location filename="../../app/draftwise/core/measuring/arms.py" line="377" />
      <source>without speculation ({settings})</source>
      <translation>投機的デコードなし（{settings}）</translation>
    </message>
    <message>
      <location filename="../../app/draftwise/core/measuring/arms.py" line="378" />
      <source>without speculation</source>
      <translation>投機的デコードなし</translation>
    </message>
    <message>
      <location filename="../../app/draftwise/core/measuring/arms.py" line="379" />
      <source>with {what} ({setup})</source>
      <translation>{what}あり（{setup}）</translation>
    </message>
    <message>
      <location filename="../../app/draftwise/core/measuring/arms.py" line="428" />
      <source>starting the engine {label}</source>
      <translation>エンジンを起動中（{label}）</translation>
    </message>
    <message>
      <location filename="../../app/draftwise/core/measuring/arms.py" line="434" />
      <source>The engine was not ready after {s} s.</source>
      <translation>エンジンは {s} 秒たっても準備ができませんでした。</translation>
    </message>
    <message>
      <location filename="../../app/draftwise/core/measuring/arms.py" line="458" />
      <source>{label}: {kind} prompt, round {r}</source>
      <translation>{label}: {kind} プロンプト、{r} 回目</translation>
    </message>
    <message>
      <location filename="../../app/draftwise/core/measuring/arms.py" line="464" />
      <source>The engine generated no tokens for the {kind} prompt.</source>
      <translation>{kind} プロンプトでエンジンがトークンを生成しませんでした。</translation>
    </message>
    <message>
      <location filename="../../app/draftwise/core/measuring/arms.py" line="475" />
      <source>{label}: stopped, its drafts are refused ({accepted} of {drafted} accepted)</source>
      <translation>{label}: 下書きが受け入れられないため止めました（{drafted} 個中 {accepted} 個を受理）</translation>
    </message>
    <message>
      <location filename="../../app/draftwise/core/measuring/arms.py" line="511" />
      <source>The engine stopped: {sentence}</source>
      <translation>エンジンが停止しました: {sentence}</translation>
    </message>
    <message>
      <location filename="../../app/draftwise/core/measuring/arms.py" line="513" />
      <source>The engine stopped before it was ready.</source>
      <translation>エンジンは準備ができる前に停止しました。</translation>
    </message>
    <message>
      <location filename="../../app/draftwise/core/measuring/arms.py" line="528" />
      <source>The engine answered {status}: {body}</source>
      <translation>エンジンの応答は {status} でした: {body}</translation>
    </message>
    <message>
      <location filename="../../app/draftwise/core/measuring/arms.py" line="555" />
      <source>The engine did not answer: {why}</source>
      <translation>エンジンが応答しませんでした: {why}</translation>
    </message>
    <message>
      <location filename="../../app/draftwise/core/measuring/learn.py" line="95" />
      <source>No setup drafted on your prompts.</source>
      <translation>あなたのプロンプトではどの設定もドラフトしませんでした。</translation>
    </message>
    <message>
      <location filename="../../app/draftwise/core/measuring/learn.py" line="148" />
      <source>measuring again on {n} of your prompts, because {why}</source>
      <translation>あなたのプロンプト {n} 件で測り直します。理由: {why}</translation>
    </message>
    <message>
      <location filename="../../app/draftwise/core/measuring/learn.py" line="199" />
      <source>Your requests suggest measuring again ({why}), but the computer is busy; Draftwise asks again at the next launch.</source>
      <translation>あなたのリクエストからは測り直しが勧められます（{why}）が、コンピューターが使用中です。次の起動時にもう一度確認します。</translation>
    </message>
    <message>
      <location filename="../../app/draftwise/core/measuring/quick.py" line="495" />
      <source>no round {r}: it would take the measurement past {seconds} s; the choice stands on what was measured, and learning from use checks it on your own requests</source>
      <translation>ラウンド {r} は行いません: 測定が {seconds} 秒を超えるためです。選択は測った結果のままで、使いながらの学習があなた自身のリクエストで確かめます</translation>
    </message>
    <message>
      <location filename="../../app/draftwise/core/measuring/quick.py" line="499" />
      <source>round {r}: still checking {running} against none{dropped}</source>
      <translation>ラウンド {r}: {running} を投機なしと比べて確認中{dropped}</translation>
    </message>
    <message>
      <location filename="../../app/draftwise/core/measuring/quick.py" line="501" />
      <source>; left out, behind beyond the noise: {setups}</source>
      <translation>。ノイズを超えて遅れているため除外: {setups}</translation>
    </message>
    <message>
      <location filename="../../app/draftwise/core/measuring/sweep.py" line="112" />
      <source>Your own --spec-type {type} decides the speculative types; remove it from the engine arguments to sweep them.</source>
      <translation>ご自身の --spec-type {type} が投機の種類を決めています。種類を総当たりで試すには、エンジン引数からそれを外してください。</translation>
    </message>
    <message>
      <location filename="../../app/draftwise/core/planning/drafter_fit.py" line="42" />
      <source>draft model</source>
      <translation>ドラフトモデル</translation>
    </message>
    <message>
      <location filename="../../app/draftwise/core/planning/drafter_fit.py" line="56" />
      <source>The {drafter} was left out: with it, the model would not fit at all.</source>
      <translation>{drafter}は使いません: 使うとモデルがまったく収まりません。</translation>
    </message>
    <message>
      <location filename="../../app/draftwise/core/planning/drafter_fit.py" line="57" />
      <source>The {drafter} stays because you chose it, although the model would not fit at all.</source>
      <translation>{drafter}は指定されたので使います。ただし、モデルがまったく収まりません。</translation>
    </message>
    <message>
      <location filename="../../app/draftwise/core/planning/drafter_fit.py" line="61" />
      <source>The {drafter} was left out: with it, the context would shrink from {ctx0} to {ctx}.</source>
      <translation>{drafter}は使いません: 使うとコンテキストが {ctx0} から {ctx} に減ってしまいます。</translation>
    </message>
    <message>
      <location filename="../../app/draftwise/core/planning/drafter_fit.py" line="63" />
      <source>The {drafter} stays because you chose it, although the context would shrink from {ctx0} to {ctx}.</source>
      <translation>{drafter}は指定されたので使います。ただし、コンテキストが {ctx0} から {ctx} に減ります。</translation>
    </message>
    <message>
      <location filename="../../app/draftwise/core/planning/drafter_fit.py" line="66" />
      <source>The {drafter} was left out: with it, the KV cache would drop from {kv0} to {kv}.</source>
      <translation>{drafter}は使いません: 使うと KV キャッシュが {kv0} から {kv} に下がってしまいます。</translation>
    </message>
    <message>
      <location filename="../../app/draftwise/core/planning/drafter_fit.py" line="68" />
      <source>The {drafter} stays because you chose it, although the KV cache would drop from {kv0} to {kv}.</source>
      <translation>{drafter}は指定されたので使います。ただし、KV キャッシュが {kv0} から {kv} に下がります。</translation>
    </message>
    <message>
      <location filename="../../app/draftwise/core/planning/drafter_fit.py" line="71" />
      <source>The {drafter} was left out: with it, only {slots} slot instead of {slots0} would fit.</source>
      <translation>{drafter}は使いません: 使うとスロットが {slots0} ではなく {slots} つしか収まりません。</translation>
    </message>
    <message>
      <location filename="../../app/draftwise/core/planning/drafter_fit.py" line="73" />
      <source>The {drafter} stays because you chose it, although only {slots} slot instead of {slots0} would fit.</source>
      <translation>{drafter}は指定されたので使います。ただし、スロットが {slots0} ではなく {slots} つしか収まりません。</translation>
    </message>
    <message>
      <location filename="../../app/draftwise/core/planning/drafter_fit.py" line="77" />
      <source>The {drafter} was left out: with it, part of the model would have to leave the GPU.</source>
      <translation>{drafter}は使いません: 使うとモデルの一部を GPU の外に出さなければなりません。</translation>
    </message>
    <message>
      <location filename="../../app/draftwise/core/planning/drafter_fit.py" line="79" />
      <source>The {drafter} stays because you chose it, although part of the model would have to leave the GPU.</source>
      <translation>{drafter}は指定されたので使います。ただし、モデルの一部を GPU の外に出す必要があります。</translation>
    </message>
    <message>
      <location filename="../../app/draftwise/core/planning/fit_search.py" line="54" />
      <source>KV cache {kv} needs flash attention, and -fa off turns it off. Remove -fa off or set the KV cache to Auto or f16.</source>
      <translation>KV キャッシュ {kv} には Flash Attention が必要ですが、-fa off で無効になっています。-fa off を外すか、KV キャッシュを「自動」か f16 にしてください。</translation>
    </message>
    <message>
      <location filename="../../app/draftwise/core/planning/fit_search.py" line="59" />
      <source>KV cache {kv} does not work with this model: its attention heads hold {sizes} values, not a multiple of 32. Set the KV cache to Auto or f16.</source>
      <translation>KV キャッシュ {kv} はこのモデルでは使えません: アテンションヘッドの値の数が {sizes} で、32 の倍数ではありません。KV キャッシュを自動か f16 にしてください。</translation>
    </message>
    <message>
      <location filename="../../app/draftwise/core/planning/fit_search.py" line="90" />
      <source>The context is {trained} instead of {want}: the engine stops each conversation at the {trained} this model was trained for (RoPE scaling, e.g. --rope-scaling yarn --rope-scale 2, raises that).</source>
      <translation>コンテキストは {want} ではなく {trained} です。エンジンは各会話を、このモデルが学習した {trained} で打ち切ります(RoPE スケーリング、例えば --rope-scaling yarn --rope-scale 2 で上限が上がります)。</translation>
    </message>
    <message>
      <location filename="../../app/draftwise/core/planning/fit_search.py" line="143" />
      <source>the GPU</source>
      <translation>GPU</translation>
    </message>
    <message>
      <location filename="../../app/draftwise/core/planning/fit_search.py" line="145" />
      <source>the GPU's share of memory</source>
      <translation>GPU が使えるメモリ</translation>
    </message>
    <message>
      <location filename="../../app/draftwise/core/planning/fit_search.py" line="156" />
      <source>One slot instead of {slots}: {slots} parallel conversations would not fit in {where}.</source>
      <translation>スロットは {slots} ではなく 1 つにします: {slots} 件の同時会話は{where}に収まりません。</translation>
    </message>
    <message>
      <location filename="../../app/draftwise/core/planning/fit_search.py" line="160" />
      <source>One slot instead of {slots}: more would not fit in {where}.</source>
      <translation>スロットは {slots} ではなく 1 つにします: それ以上は{where}に収まりません。</translation>
    </message>
    <message>
      <location filename="../../app/draftwise/core/planning/fit_search.py" line="165" />
      <source>The KV cache is stored as {kv} instead of {kv0} so the {ctx} context fits in {where}.</source>
      <translation>コンテキスト {ctx} が{where}に収まるよう、KV キャッシュを {kv0} ではなく {kv} で保存します。</translation>
    </message>
    <message>
      <location filename="../../app/draftwise/core/planning/fit_search.py" line="171" />
      <source>The context is {ctx} instead of {want} with a {kv} KV cache: that is what fits in {where}.</source>
      <translation>コンテキストは {want} ではなく {ctx} です（KV キャッシュは {kv}）: {where}に収まるのはここまでです。</translation>
    </message>
    <message>
      <location filename="../../app/draftwise/core/planning/fit_search.py" line="174" />
      <source>The context is {ctx} instead of {want}: that is what fits in {where}.</source>
      <translation>コンテキストは {want} ではなく {ctx} です: {where}に収まるのはここまでです。</translation>
    </message>
    <message>
      <location filename="../../app/draftwise/core/planning/fit_search.py" line="263" />
      <source>One slot instead of {slots}: more would not fit.</source>
      <translation>スロットは {slots} ではなく 1 つにします: それ以上は収まりません。</translation>
    </message>
    <message>
      <location filename="../../app/draftwise/core/planning/fit_search.py" line="265" />
      <source>The KV cache is stored as {kv} instead of {kv0} to fit in memory.</source>
      <translation>メモリに収まるよう、KV キャッシュを {kv0} ではなく {kv} で保存します。</translation>
    </message>
    <message>
      <location filename="../../app/draftwise/core/planning/fit_search.py" line="273" />
      <source>The experts of {n} of {blocks} layers stay in RAM (the model does not fit on the GPU even with the smallest context); the rest runs on the GPU.</source>
      <translation>{blocks} 層のうち {n} 層のエキスパートは RAM に置きます（最小のコンテキストでもモデルが GPU に収まらないため）。残りは GPU で動きます。</translation>
    </message>
    <message>
      <location filename="../../app/draftwise/core/planning/fit_search.py" line="276" />
      <source>The model runs on the CPU: not even one layer fits on the GPU next to the context.</source>
      <translation>モデルは CPU で動きます: コンテキストと一緒では、GPU に 1 層も収まりません。</translation>
    </message>
    <message>
      <location filename="../../app/draftwise/core/planning/fit_search.py" line="279" />
      <source>{on_gpu} of {blocks} layers run on the GPU and the rest on the CPU (slower): the model does not fit on the GPU even with the smallest context.</source>
      <translation>{blocks} 層のうち {on_gpu} 層を GPU で、残りを CPU で動かします（遅くなります）: 最小のコンテキストでもモデルが GPU に収まりません。</translation>
    </message>
    <message>
      <location filename="../../app/draftwise/core/planning/fit_search.py" line="282" />
      <source>The experts of {n} layers stay in RAM.</source>
      <translation>{n} 層のエキスパートは RAM に置きます。</translation>
    </message>
    <message>
      <location filename="../../app/draftwise/core/planning/fit_search.py" line="292" />
      <source>Attention and the KV cache of every layer run on the GPU, the feed-forward weights of {n} of {blocks} layers on the CPU (slower): the model does not fit on the GPU even with the smallest context.</source>
      <translation>全レイヤーのアテンションと KV キャッシュは GPU で、{blocks} 層のうち {n} 層のフィードフォワードの重みは CPU で動きます（遅くなります）。最小のコンテキストでもモデルが GPU に収まりません。</translation>
    </message>
    <message>
      <location filename="../../app/draftwise/core/planning/fit_search.py" line="295" />
      <source>Attention and the KV cache of every layer run on the GPU, the feed-forward weights of {n} of {blocks} layers on the CPU (slower): the model does not fit on the GPU even with the smallest context. Each token reads {ffn} from RAM this way, against {layers} with whole layers on the CPU.</source>
      <translation>全レイヤーのアテンションと KV キャッシュは GPU で、{blocks} 層のうち {n} 層のフィードフォワードの重みは CPU で動きます（遅くなります）。最小のコンテキストでもモデルが GPU に収まりません。この配置では 1 トークンごとに RAM から {ffn} を読みます（レイヤーごと CPU に置くと {layers}）。</translation>
    </message>
    <message>
      <location filename="../../app/draftwise/core/planning/model_shape.py" line="245" />
      <source>The recurrent state size is not in this file's metadata.</source>
      <translation>再帰状態のサイズがこのファイルのメタデータにありません。</translation>
    </message>
    <message>
      <location filename="../../app/draftwise/core/planning/model_shape.py" line="338" />
      <source>The memory of a {arch} model is computed from the engine's source but not yet checked against the engine: {margin} is added to its cache, and the estimate is rough.</source>
      <translation>{arch} モデルのメモリはエンジンのソースから計算したもので、まだエンジンで確かめていません。キャッシュに {margin} を上乗せしており、見積もりはおおよそです。</translation>
    </message>
    <message>
      <location filename="../../app/draftwise/core/planning/placement.py" line="103" />
      <source>Other computers are not used with unified memory: the model is planned for this computer alone.</source>
      <translation>ユニファイドメモリでは他のコンピューターを使いません。モデルはこのコンピューターだけで計画されます。</translation>
    </message>
    <message>
      <location filename="../../app/draftwise/core/planning/placement.py" line="121" />
      <source>{gpu} is left out: only {free} of it is free.</source>
      <translation>{gpu} は使いません: 空きが {free} しかありません。</translation>
    </message>
    <message>
      <location filename="../../app/draftwise/core/planning/placement.py" line="124" />
      <source>{gpu} is left out: your limit leaves nothing of it to use.</source>
      <translation>{gpu} は使いません: 設定した上限では使える分が残りません。</translation>
    </message>
    <message>
      <location filename="../../app/draftwise/core/planning/plan_args.py" line="108" />
      <source>Each conversation keeps {n} context checkpoints instead of 32 (each {size}), so they fit in RAM; a long chat may then re-read more of its prompt.</source>
      <translation>RAM に収まるよう、各会話のコンテキストチェックポイントは 32 ではなく {n} 個です(1 個 {size})。長い会話ではプロンプトを読み直す量が増えることがあります。</translation>
    </message>
    <message>
      <location filename="../../app/draftwise/core/planning/planner.py" line="87" />
      <source>MTP runs with one slot: more were unreliable in this engine.</source>
      <translation>MTP はスロット 1 つで動かします: このエンジンでは、それ以上だと不安定でした。</translation>
    </message>
    <message>
      <location filename="../../app/draftwise/core/planning/planner.py" line="161" />
      <source>Weights not repacked (-nr): re-laying them for the CPU's faster kernels would take {size} more memory, and the model would not fit; without that it fits.</source>
      <translation>重みを再配置しません（-nr）: CPU の高速なカーネル向けに再配置するとメモリが {size} 多く必要になり、モデルが収まりません。再配置しなければ収まります。</translation>
    </message>
    <message>
      <location filename="../../app/draftwise/core/planning/planner.py" line="163" />
      <source>a smaller setup</source>
      <translation>より小さい設定</translation>
    </message>
    <message>
      <location filename="../../app/draftwise/core/planning/planner.py" line="164" />
      <source>Weights not repacked (-nr): re-laying them for the CPU's faster kernels would take {size} more memory and cost the plan a concession ({why}); without that it needs none.</source>
      <translation>重みを再配置しません（-nr）: CPU の高速なカーネル向けに再配置するとメモリが {size} 多く必要になり、計画を譲歩させることになります（{why}）。再配置しなければ譲歩は要りません。</translation>
    </message>
    <message>
      <location filename="../../app/draftwise/core/planning/planner.py" line="193" />
      <source>The weights are estimated from the file size: the tensor table could not be read.</source>
      <translation>重みのサイズはファイルサイズからの見積もりです: テンソル表を読めませんでした。</translation>
    </message>
    <message>
      <location filename="../../app/draftwise/core/planning/planner.py" line="214" />
      <source>GPU memory and RAM together</source>
      <translation>GPU メモリと RAM の合計</translation>
    </message>
    <message>
      <location filename="../../app/draftwise/core/planning/planner.py" line="216" />
      <source>the memory the GPU may use</source>
      <translation>GPU が使えるメモリ</translation>
    </message>
    <message>
      <location filename="../../app/draftwise/core/planning/planner.py" line="221" />
      <source>It does not fit: even with a {ctx} context and a {kv} KV cache it needs about {need}, and {have} of {where} is free. To run it, close other apps to free about {short} or pick a smaller quantization of this model (one under about {weights}).</source>
      <translation>収まりません: コンテキスト {ctx}、KV キャッシュ {kv} にしても約 {need} 必要ですが、{where}の空きは {have} です。動かすには、ほかのアプリを閉じて約 {short} 空けるか、このモデルのもっと小さい量子化版（約 {weights} 未満）を選んでください。</translation>
    </message>
    <message>
      <location filename="../../app/draftwise/core/planning/planner.py" line="225" />
      <source>It does not fit: even with a {ctx} context and a {kv} KV cache it needs about {need}, and {have} of {where} is free. To run it, close other apps to free about {short}.</source>
      <translation>収まりません: コンテキスト {ctx}、KV キャッシュ {kv} にしても約 {need} 必要ですが、{where}の空きは {have} です。動かすには、ほかのアプリを閉じて約 {short} 空けてください。</translation>
    </message>
    <message>
      <location filename="../../app/draftwise/core/processes/orphans.py" line="197" />
      <source>Stopped an engine left running by an earlier Draftwise (pid {pid}, port {port}).</source>
      <translation>以前の Draftwise が動かしたまま残したエンジンを停止しました（pid {pid}、ポート {port}）。</translation>
    </message>
    <message>
      <location filename="../../app/draftwise/core/processes/orphans.py" line="200" />
      <source>An engine left running by an earlier Draftwise (pid {pid}) would not stop; end it in the task manager.</source>
      <translation>以前の Draftwise が残したエンジン（pid {pid}）が停止しません。タスクマネージャーで終了してください。</translation>
    </message>
    <message>
      <location filename="../../app/draftwise/core/records.py" line="91" />
      <source>Could not read the {what} {path}: {error}.</source>
      <translation>{what} {path} を読み込めませんでした: {error}。</translation>
    </message>
    <message>
      <location filename="../../app/draftwise/core/records.py" line="103" />
      <source>The {what} {path} was written by a newer Draftwise (version {found}; this one reads {known}): it is left as it is and not used. Update Draftwise to use it again.</source>
      <translation>{what} {path} は新しい Draftwise で書かれています（バージョン {found}。このバージョンが読めるのは {known} まで）。ファイルはそのまま残し、使いません。また使うには Draftwise を更新してください。</translation>
    </message>
    <message>
      <location filename="../../app/draftwise/core/records.py" line="136" />
      <source>The {what} {path} is damaged ({error}) and could not be moved: {move_error}.</source>
      <translation>{what} {path} が壊れていて（{error}）、退避もできませんでした: {move_error}。</translation>
    </message>
    <message>
      <location filename="../../app/draftwise/core/records.py" line="140" />
      <source>The {what} was damaged ({error}); it was set aside as {name} and a new one is started.</source>
      <translation>{what}が壊れていました（{error}）。{name} として退避し、新しい記録を始めます。</translation>
    </message>
    <message>
      <location filename="../../app/draftwise/core/rpc/link.py" line="94" />
      <source>The worker {worker} did not answer ({error}); check that ggml-rpc-server runs there and the network lets it through.</source>
      <translation>ワーカー {worker} は応答しませんでした（{error}）。そこで ggml-rpc-server が動いていて、ネットワークが通すことを確認してください。</translation>
    </message>
    <message>
      <location filename="../../app/draftwise/core/rpc/link.py" line="102" />
      <source>The worker {worker} answered with something that is not the RPC protocol.</source>
      <translation>ワーカー {worker} は RPC プロトコルではない応答を返しました。</translation>
    </message>
    <message>
      <location filename="../../app/draftwise/core/rpc/link.py" line="112" />
      <source>The connection to the worker {worker} broke while it was measured ({error}).</source>
      <translation>ワーカー {worker} への接続が測定中に切れました（{error}）。</translation>
    </message>
    <message>
      <location filename="../../app/draftwise/core/rpc/link.py" line="132" />
      <source>The worker {worker} could not lend {size} MiB to measure its link.</source>
      <translation>ワーカー {worker} は回線を測るための {size} MiB を貸せませんでした。</translation>
    </message>
    <message>
      <location filename="../../app/draftwise/core/rpc/link.py" line="159" />
      <source>record of the links to other computers</source>
      <translation>ほかのコンピューターへの回線の記録</translation>
    </message>
    <message>
      <location filename="../../app/draftwise/core/rpc/share.py" line="38" />
      <source>Anyone who can reach this address can use this computer's memory and processor: the worker has no password or encryption. Share on a network you trust, and stop sharing when you are done.</source>
      <translation>このアドレスに届く人は誰でも、このコンピューターのメモリとプロセッサーを使えます。ワーカーにはパスワードも暗号化もありません。信頼できるネットワークでだけ共有し、終わったら共有を止めてください。</translation>
    </message>
    <message>
      <location filename="../../app/draftwise/core/rpc/share.py" line="56" />
      <source>The sharing port must be from 1 to 65535, not {port}.</source>
      <translation>共有ポートは 1 から 65535 の間にしてください（{port} ではなく）。</translation>
    </message>
    <message>
      <location filename="../../app/draftwise/core/rpc/share.py" line="61" />
      <source>The sharing address {host!r} is not an IPv4 address of this computer.</source>
      <translation>共有アドレス {host!r} はこのコンピューターの IPv4 アドレスではありません。</translation>
    </message>
    <message>
      <location filename="../../app/draftwise/core/rpc/share.py" line="138" />
      <source>Port {port} is already in use on {host}; choose another sharing port.</source>
      <translation>{host} のポート {port} はすでに使われています。別の共有ポートを選んでください。</translation>
    </message>
    <message>
      <location filename="../../app/draftwise/core/rpc/share.py" line="147" />
      <source>The worker {program} could not be started: {reason}.</source>
      <translation>ワーカー {program} を起動できませんでした: {reason}。</translation>
    </message>
    <message>
      <location filename="../../app/draftwise/core/rpc/share.py" line="155" />
      <source>The worker stopped at once: {line}</source>
      <translation>ワーカーはすぐに停止しました: {line}</translation>
    </message>
    <message>
      <location filename="../../app/draftwise/core/rpc/share.py" line="160" />
      <source>The worker did not start listening on {endpoint} within {seconds} s.</source>
      <translation>ワーカーは {seconds} 秒以内に {endpoint} で待ち受けを始めませんでした。</translation>
    </message>
    <message>
      <location filename="../../app/draftwise/core/rpc/upload.py" line="157" />
      <source>Sending up to {total} of weights to {workers}…</source>
      <translation>{workers} に最大 {total} の重みを送信中…</translation>
    </message>
    <message>
      <location filename="../../app/draftwise/core/rpc/upload.py" line="159" />
      <source>Sending up to {total} of weights to {workers}: about {left} left at the measured link speed.</source>
      <translation>{workers} に最大 {total} の重みを送信中：測定した回線速度で残り約 {left}。</translation>
    </message>
    <message>
      <location filename="../../app/draftwise/core/rpc/upload.py" line="162" />
      <source>Sent {sent} of weights to {workers}; the engine is getting ready.</source>
      <translation>{workers} に {sent} の重みを送信しました。エンジンの準備中です。</translation>
    </message>
    <message>
      <location filename="../../app/draftwise/core/rpc/upload.py" line="165" />
      <source>Sending weights to {workers}: {sent} of up to {total}.</source>
      <translation>{workers} に重みを送信中：最大 {total} のうち {sent}。</translation>
    </message>
    <message>
      <location filename="../../app/draftwise/core/rpc/upload.py" line="167" />
      <source>Sending weights to {workers}: {sent} of up to {total}, {rate}/s, about {left} left.</source>
      <translation>{workers} に重みを送信中：最大 {total} のうち {sent}、{rate}/秒、残り約 {left}。</translation>
    </message>
    <message>
      <location filename="../../app/draftwise/core/rpc/worker_rate.py" line="113" />
      <source>it runs protocol {version}, whose operations this Draftwise does not number</source>
      <translation>プロトコル {version} で動いており、この Draftwise はその演算の番号を知りません</translation>
    </message>
    <message>
      <location filename="../../app/draftwise/core/rpc/worker_rate.py" line="119" />
      <source>it has {free} MiB free, and the test needs {need} MiB free</source>
      <translation>空きメモリーが {free} MiB で、テストには {need} MiB の空きが必要です</translation>
    </message>
    <message>
      <location filename="../../app/draftwise/core/rpc/worker_rate.py" line="127" />
      <source>it could not lend {size} MiB for the test</source>
      <translation>テスト用に {size} MiB を確保できませんでした</translation>
    </message>
    <message>
      <location filename="../../app/draftwise/core/rpc/worker_rate.py" line="136" />
      <source>it stopped answering during the test ({error})</source>
      <translation>テスト中に応答しなくなりました（{error}）</translation>
    </message>
    <message>
      <location filename="../../app/draftwise/core/rpc/worker_rate.py" line="168" />
      <source>it did not answer ({error})</source>
      <translation>応答しませんでした（{error}）</translation>
    </message>
    <message>
      <location filename="../../app/draftwise/core/rpc/worker_rate.py" line="193" />
      <source>this computer's own figure could not be taken</source>
      <translation>このコンピューター自身の値を測定できませんでした</translation>
    </message>
    <message>
      <location filename="../../app/draftwise/core/rpc/worker_rate.py" line="207" />
      <source>this computer's own worker did not start ({error})</source>
      <translation>このコンピューター自身のワーカーが起動しませんでした（{error}）</translation>
    </message>
    <message>
      <location filename="../../app/draftwise/core/rpc/worker_rate.py" line="212" />
      <source>this computer's own figure could not be taken: {why}</source>
      <translation>このコンピューター自身の値を測定できませんでした: {why}</translation>
    </message>
    <message>
      <location filename="../../app/draftwise/core/rpc/workers.py" line="69" />
      <source>The worker address {address!r} is not host:port (for example 192.168.1.20:50052).</source>
      <translation>ワーカーのアドレス {address!r} は host:port の形ではありません（例: 192.168.1.20:50052）。</translation>
    </message>
    <message>
      <location filename="../../app/draftwise/core/rpc/workers.py" line="72" />
      <source>The worker address {address!r} has more than one colon: IPv6 addresses are not supported by the engine; use an IPv4 address or a name.</source>
      <translation>ワーカーのアドレス {address!r} にはコロンが複数あります。エンジンは IPv6 アドレスに対応していません。IPv4 アドレスか名前を使ってください。</translation>
    </message>
    <message>
      <location filename="../../app/draftwise/core/rpc/workers.py" line="75" />
      <source>The worker address {address!r} has an invalid host name {host!r}.</source>
      <translation>ワーカーのアドレス {address!r} のホスト名 {host!r} が正しくありません。</translation>
    </message>
    <message>
      <location filename="../../app/draftwise/core/rpc/workers.py" line="78" />
      <source>The worker address {address!r} needs a port from 1 to 65535 after the colon.</source>
      <translation>ワーカーのアドレス {address!r} には、コロンの後に 1 から 65535 のポートが必要です。</translation>
    </message>
    <message>
      <location filename="../../app/draftwise/core/rpc/workers.py" line="93" />
      <source>The worker {worker} is listed twice; list each computer once.</source>
      <translation>ワーカー {worker} が二度書かれています。各コンピューターは一度だけ書いてください。</translation>
    </message>
    <message>
      <location filename="../../app/draftwise/core/rpc/workers.py" line="118" />
      <source>The worker {worker} runs another version of the RPC protocol ({version}); install the same engine build there as here and start its ggml-rpc-server again.</source>
      <translation>ワーカー {worker} は別のバージョンの RPC プロトコル（{version}）を使っています。そこにこちらと同じエンジンのビルドを入れ、ggml-rpc-server をもう一度起動してください。</translation>
    </message>
    <message>
      <location filename="../../app/draftwise/core/rpc/workers.py" line="123" />
      <source>The worker {worker} runs another version of the RPC protocol; install the same engine build there as here and start its ggml-rpc-server again.</source>
      <translation>ワーカー {worker} は別のバージョンの RPC プロトコルを使っています。そこにこちらと同じエンジンのビルドを入れ、ggml-rpc-server をもう一度起動してください。</translation>
    </message>
    <message>
      <location filename="../../app/draftwise/core/rpc/workers.py" line="126" />
      <source>The engine cannot read the worker address {worker}; write it as host:port.</source>
      <translation>エンジンはワーカーのアドレス {worker} を読めません。host:port の形で書いてください。</translation>
    </message>
    <message>
      <location filename="../../app/draftwise/core/rpc/workers.py" line="128" />
      <source>The worker {worker} cannot be reached: nothing answers there. Start ggml-rpc-server on that computer (or check the address and firewall), or remove it from Other computers.</source>
      <translation>ワーカー {worker} に接続できません。そこでは何も応答していません。そのコンピューターで ggml-rpc-server を起動する（またはアドレスとファイアウォールを確認する）か、「他のコンピューター」から削除してください。</translation>
    </message>
    <message>
      <location filename="../../app/draftwise/core/rpc/workers.py" line="132" />
      <source>The worker {worker} answered, but not as an RPC worker of this engine; check that the port belongs to ggml-rpc-server.</source>
      <translation>ワーカー {worker} は応答しましたが、このエンジンの RPC ワーカーとしてではありません。そのポートが ggml-rpc-server のものか確認してください。</translation>
    </message>
    <message>
      <location filename="../../app/draftwise/core/rpc/workers.py" line="134" />
      <source>The worker {worker} could not be used; the engine's log has the details.</source>
      <translation>ワーカー {worker} を使えませんでした。詳しくはエンジンのログを見てください。</translation>
    </message>
    <message>
      <location filename="../../app/draftwise/core/rpc/workers.py" line="175" />
      <source>The worker {worker} did not answer within {seconds} s; check that ggml-rpc-server runs there and the network lets it through.</source>
      <translation>ワーカー {worker} は {seconds} 秒以内に応答しませんでした。そこで ggml-rpc-server が動いていて、ネットワークが通すことを確認してください。</translation>
    </message>
    <message>
      <location filename="../../app/draftwise/core/rpc/workers.py" line="179" />
      <source>The engine could not be started to ask the worker {worker}: {reason}.</source>
      <translation>ワーカー {worker} に問い合わせるためのエンジンを起動できませんでした: {reason}。</translation>
    </message>
    <message>
      <location filename="../../app/draftwise/core/rpc/workers.py" line="192" />
      <source>The worker {worker} has no memory to lend: {free} MiB free of {total} MiB. Close programs there, or remove it from Other computers.</source>
      <translation>ワーカー {worker} には貸せるメモリがありません（{total} MiB 中 {free} MiB が空き）。そこでプログラムを閉じるか、「他のコンピューター」から削除してください。</translation>
    </message>
    <message>
      <location filename="../../app/draftwise/core/serving/instances.py" line="73" />
      <source>The served model {id} stopped at start with this drafter (exit code {code}); it runs without it.</source>
      <translation>サーブ中のモデル {id} がこのドラフターで起動時に停止しました（終了コード {code}）。ドラフターなしで実行します。</translation>
    </message>
    <message>
      <location filename="../../app/draftwise/core/serving/library.py" line="113" />
      <source>{path} does not exist; give a folder of GGUF models or a GGUF file.</source>
      <translation>{path} は存在しません。GGUF モデルのフォルダーか GGUF ファイルを指定してください。</translation>
    </message>
    <message>
      <location filename="../../app/draftwise/core/serving/library.py" line="119" />
      <source>{path} holds no GGUF file; give a folder with models in it (or download one with `draftwise get`).</source>
      <translation>{path} に GGUF ファイルがありません。モデルのあるフォルダーを指定してください（または `draftwise get` でダウンロードしてください）。</translation>
    </message>
    <message>
      <location filename="../../app/draftwise/core/serving/library.py" line="128" />
      <source>{name} cannot be read ({why}); it is left out. Download it again or remove it from the folder.</source>
      <translation>{name} を読めません（{why}）。除外しました。もう一度ダウンロードするか、フォルダーから削除してください。</translation>
    </message>
    <message>
      <location filename="../../app/draftwise/core/serving/library.py" line="132" />
      <source>{name} cannot be read ({why}); it is left out. Check its permissions or remove it from the folder.</source>
      <translation>{name} を読めません（{why}）。除外しました。アクセス権を確認するか、フォルダーから削除してください。</translation>
    </message>
    <message>
      <location filename="../../app/draftwise/core/serving/library.py" line="140" />
      <source>{name}: the engine's model list cannot hold a name or folder with [ ] : ; or #; it is left out. Rename it to serve it.</source>
      <translation>{name}: エンジンのモデル一覧は [ ] : ; # を含む名前やフォルダーを扱えないため、除外しました。サーブするには名前を変えてください。</translation>
    </message>
    <message>
      <location filename="../../app/draftwise/core/serving/library.py" line="150" />
      <source>Two models would both be named {id}: {first} and {second}. Clients pick a model by its file name, so rename one of them (or serve one folder only).</source>
      <translation>2つのモデルが同じ名前 {id} になります: {first} と {second}。クライアントはファイル名でモデルを選ぶため、どちらかの名前を変えてください（または1つのフォルダーだけをサーブしてください）。</translation>
    </message>
    <message>
      <location filename="../../app/draftwise/core/serving/library.py" line="155" />
      <source>No model to serve in {paths}: every GGUF there is a drafter, a projector or unreadable.</source>
      <translation>{paths} にサーブできるモデルがありません: どの GGUF もドラフター、プロジェクター、または読めないファイルです。</translation>
    </message>
    <message>
      <location filename="../../app/draftwise/core/serving/serve_flow.py" line="136" />
      <source>{id} stopped while starting (exit code {code}). The other models keep serving; the log says why.</source>
      <translation>{id} は起動中に停止しました（終了コード {code}）。ほかのモデルはサーブを続けます。理由はログにあります。</translation>
    </message>
    <message>
      <location filename="../../app/draftwise/core/serving/serve_flow.py" line="144" />
      <source>{id} could not start: {sentence} {next_step} The other models keep serving.</source>
      <translation>{id} を起動できませんでした: {sentence} {next_step} ほかのモデルはサーブを続けます。</translation>
    </message>
    <message>
      <location filename="../../app/draftwise/core/serving/serve_flow.py" line="150" />
      <source>{id} stopped at start with its draft model, so it was started again without it. The other models keep serving.</source>
      <translation>{id} はドラフトモデル付きの起動で停止したため、ドラフトモデルなしで起動し直しました。ほかのモデルはサーブを続けます。</translation>
    </message>
    <message>
      <location filename="../../app/draftwise/core/serving/serve_flow.py" line="152" />
      <source>{id} stopped at start with its draft model ({sentence}), so it was started again without it. The other models keep serving.</source>
      <translation>{id} はドラフトモデル付きの起動で停止したため（{sentence}）、ドラフトモデルなしで起動し直しました。ほかのモデルはサーブを続けます。</translation>
    </message>
    <message>
      <location filename="../../app/draftwise/core/serving/serve_flow.py" line="157" />
      <source>{id}: {reason} The other models keep serving.</source>
      <translation>{id}: {reason} ほかのモデルはサーブを続けます。</translation>
    </message>
    <message>
      <location filename="../../app/draftwise/core/serving/serve_flow.py" line="239" />
      <source>{problem} {halt}</source>
      <translation>{problem} {halt}</translation>
    </message>
    <message>
      <location filename="../../app/draftwise/core/serving/serve_flow.py" line="244" />
      <source>{problem} The lower setting cannot be written for the engine ({why}).</source>
      <translation>{problem} 下げた設定をエンジン用に書き出せませんでした（{why}）。</translation>
    </message>
    <message>
      <location filename="../../app/draftwise/core/serving/serve_flow.py" line="273" />
      <source>{id} runs without its draft model from now on; `draftwise broken clear` lets it try again later.</source>
      <translation>{id} は今後ドラフトモデルなしで動きます。`draftwise broken clear` で後からもう一度試せます。</translation>
    </message>
    <message>
      <location filename="../../app/draftwise/core/serving/serve_plan.py" line="116" />
      <source>{name} is left out: {why}</source>
      <translation>{name} は除外しました: {why}</translation>
    </message>
    <message>
      <location filename="../../app/draftwise/core/serving/serve_plan.py" line="117" />
      <source>it does not fit this computer</source>
      <translation>このコンピューターに収まりません</translation>
    </message>
    <message>
      <location filename="../../app/draftwise/core/serving/serve_plan.py" line="128" />
      <source>No model to serve.</source>
      <translation>サーブするモデルがありません。</translation>
    </message>
    <message>
      <location filename="../../app/draftwise/core/serving/serve_plan.py" line="158" />
      <source>Models are loaded one at a time: planned on half of this computer each, they would not fit.</source>
      <translation>モデルは1つずつ読み込みます: それぞれこのコンピューターの半分で計画すると収まりません。</translation>
    </message>
    <message>
      <location filename="../../app/draftwise/core/serving/serve_plan.py" line="178" />
      <source>{name} cannot be served as planned: {why}.</source>
      <translation>{name} は計画どおりにサーブできません: {why}。</translation>
    </message>
    <message>
      <location filename="../../app/draftwise/core/serving/serve_plan.py" line="181" />
      <source>{id}: its drafter needs {n} tokens banned, and the engine's model list holds one ban per model, so it is served without speculation (`draftwise launch` runs it with).</source>
      <translation>{id}: ドラフターには {n} 個のトークンの禁止が必要ですが、エンジンのモデル一覧はモデルごとに1つしか保持できないため、投機なしでサーブします（`draftwise launch` では投機ありで実行します）。</translation>
    </message>
    <message>
      <location filename="../../app/draftwise/core/serving/serve_plan.py" line="184" />
      <source>{id} is served without speculation: {why}.</source>
      <translation>{id} は投機なしでサーブします: {why}。</translation>
    </message>
    <message>
      <location filename="../../app/draftwise/core/serving/served_state.py" line="55" />
      <source>none</source>
      <translation>なし</translation>
    </message>
    <message>
      <location filename="../../app/draftwise/core/serving/together.py" line="100" />
      <source>{id} needs {needs} of this computer's {capacity}, more than a 1-in-{k} share, so models are loaded one at a time: a request for another model unloads the one loaded first.</source>
      <translation>{id} はこのコンピューターの {capacity} のうち {needs} を必要とし、{k} 分の1を超えるため、モデルは1つずつ読み込みます: 別のモデルへのリクエストは、先に読み込んだモデルを解放します。</translation>
    </message>
    <message>
      <location filename="../../app/draftwise/core/serving/together.py" line="106" />
      <source>Up to {k} of the {n} models stay loaded together; each is planned on a 1-in-{k} share of this computer's memory, so any {k} of them fit. A request for another unloads the one used longest ago.</source>
      <translation>{n} 個のモデルのうち最大 {k} 個を同時に読み込んだままにします。それぞれこのコンピューターのメモリーの {k} 分の1で計画するため、どの {k} 個でも収まります。別のモデルへのリクエストは、最も長く使われていないモデルを解放します。</translation>
    </message>
    <message>
      <location filename="../../app/draftwise/core/settings.py" line="315" />
      <source>Your settings in {path} could not be read ({error}); defaults are used for now.</source>
      <translation>{path} の設定を読み込めませんでした（{error}）。当面は既定の設定を使います。</translation>
    </message>
    <message>
      <location filename="../../app/draftwise/core/settings.py" line="323" />
      <source>it does not hold a settings object</source>
      <translation>設定のオブジェクトが入っていません</translation>
    </message>
    <message>
      <location filename="../../app/draftwise/core/settings.py" line="332" />
      <source>Your settings were written by a newer Draftwise; the parts this version understands are used and the rest is kept.</source>
      <translation>設定は新しい Draftwise で書かれています。このバージョンが理解できる部分を使い、残りはそのまま保持します。</translation>
    </message>
    <message>
      <location filename="../../app/draftwise/core/settings.py" line="339" />
      <source>Your settings file could not be read: {why}. It was set aside as {name} and the defaults are used.</source>
      <translation>設定ファイルを読み込めませんでした: {why}。{name} として退避し、既定の設定を使います。</translation>
    </message>
    <message>
      <location filename="../../app/draftwise/core/settings.py" line="342" />
      <source>Your settings file could not be read: {why}. It could not be moved aside and the defaults are used.</source>
      <translation>設定ファイルを読み込めませんでした: {why}。退避できなかったため、既定の設定を使います。</translation>
    </message>
    <message>
      <location filename="../../app/draftwise/core/speculation/broken.py" line="59" />
      <source>broken-drafter record</source>
      <translation>動かなかったドラフターの記録</translation>
    </message>
    <message>
      <location filename="../../app/draftwise/core/speculation/companions.py" line="114" />
      <source>Could not look for draft models in {folder}: {error}.</source>
      <translation>{folder} でドラフトモデルを探せませんでした: {error}。</translation>
    </message>
    <message>
      <location filename="../../app/draftwise/core/speculation/companions.py" line="139" />
      <source>it is not a readable GGUF file</source>
      <translation>読み込める GGUF ファイルではありません</translation>
    </message>
    <message>
      <location filename="../../app/draftwise/core/speculation/companions.py" line="154" />
      <source>it made this engine fail before</source>
      <translation>以前このエンジンが失敗する原因になりました</translation>
    </message>
    <message>
      <location filename="../../app/draftwise/core/speculation/companions.py" line="159" />
      <source>Skipped {name}: {reason}.</source>
      <translation>{name} は使いません: {reason}。</translation>
    </message>
    <message>
      <location filename="../../app/draftwise/core/speculation/companions.py" line="183" />
      <source>it carries its own MTP head, so it is a model, not a drafter</source>
      <translation>自分の MTP ヘッドを持っているので、ドラフターではなくモデルです</translation>
    </message>
    <message>
      <location filename="../../app/draftwise/core/speculation/companions.py" line="185" />
      <source>it is an MTP head for a model without its own head, and this model does not need it</source>
      <translation>MTP ヘッドのないモデル用の MTP ヘッドで、このモデルには必要ありません</translation>
    </message>
    <message>
      <location filename="../../app/draftwise/core/speculation/companions.py" line="187" />
      <source>it is an MTP head for {draft_arch}, not {arch}</source>
      <translation>{arch} ではなく {draft_arch} 用の MTP ヘッドです</translation>
    </message>
    <message>
      <location filename="../../app/draftwise/core/speculation/companions.py" line="190" />
      <source>this engine does not run MTP for {arch}</source>
      <translation>このエンジンは {arch} の MTP を実行できません</translation>
    </message>
    <message>
      <location filename="../../app/draftwise/core/speculation/companions.py" line="192" />
      <source>it has {n} MTP layers, and this engine's {arch} MTP runs only one</source>
      <translation>MTP が {n} 層ありますが、このエンジンの {arch} 用 MTP は 1 層しか動かせません</translation>
    </message>
    <message>
      <location filename="../../app/draftwise/core/speculation/companions.py" line="197" />
      <source>this engine cannot run a {kind}</source>
      <translation>このエンジンでは{kind}を使えません</translation>
    </message>
    <message>
      <location filename="../../app/draftwise/core/speculation/decision_types.py" line="221" />
      <source>EAGLE-3 drafter</source>
      <translation>EAGLE-3 ドラフター</translation>
    </message>
    <message>
      <location filename="../../app/draftwise/core/speculation/decision_types.py" line="222" />
      <source>DFlash drafter</source>
      <translation>DFlash ドラフター</translation>
    </message>
    <message>
      <location filename="../../app/draftwise/core/speculation/decision_types.py" line="223" />
      <source>DSpark drafter</source>
      <translation>DSpark ドラフター</translation>
    </message>
    <message>
      <location filename="../../app/draftwise/core/speculation/decision_types.py" line="224" />
      <source>n-gram lookup</source>
      <translation>n-gram 照合</translation>
    </message>
    <message>
      <location filename="../../app/draftwise/core/speculation/draft_check.py" line="74" />
      <source>The draft model {path} does not exist; choose the file again.</source>
      <translation>ドラフトモデル {path} がありません。ファイルを選び直してください。</translation>
    </message>
    <message>
      <location filename="../../app/draftwise/core/speculation/draft_check.py" line="77" />
      <source>The draft model {path} is a folder; choose a .gguf file inside it.</source>
      <translation>ドラフトモデル {path} はフォルダーです。中の .gguf ファイルを選んでください。</translation>
    </message>
    <message>
      <location filename="../../app/draftwise/core/speculation/draft_check.py" line="80" />
      <source>{name} is the model itself; choose a smaller draft model.</source>
      <translation>{name} はモデルそのものです。もっと小さいドラフトモデルを選んでください。</translation>
    </message>
    <message>
      <location filename="../../app/draftwise/core/speculation/draft_check.py" line="85" />
      <source>The draft model cannot be used: {error}</source>
      <translation>このドラフトモデルは使えません: {error}</translation>
    </message>
    <message>
      <location filename="../../app/draftwise/core/speculation/draft_check.py" line="88" />
      <source>{name} cannot draft for this model: {reason}. A draft must come from the same model family.</source>
      <translation>{name} はこのモデルのドラフトに使えません: {reason}。ドラフトモデルは同じモデルファミリーのものを使ってください。</translation>
    </message>
    <message>
      <location filename="../../app/draftwise/core/speculation/draft_check.py" line="102" />
      <source>This engine cannot run a {kind} (--spec-type {type}); update the engine.</source>
      <translation>このエンジンでは{kind}を使えません（--spec-type {type}）。エンジンを更新してください。</translation>
    </message>
    <message>
      <location filename="../../app/draftwise/core/speculation/draft_check.py" line="107" />
      <source>{name} cannot draft for this model: {reason}.</source>
      <translation>{name} はこのモデルのドラフトには使えません: {reason}。</translation>
    </message>
    <message>
      <location filename="../../app/draftwise/core/speculation/draft_check.py" line="109" />
      <source>{name} is the MTP head of a {draft_arch} model; it drafts only for that model, not for this {arch} model.</source>
      <translation>{name} は {draft_arch} モデル用の MTP ヘッドです。そのモデル専用で、この {arch} モデルには使えません。</translation>
    </message>
    <message>
      <location filename="../../app/draftwise/core/speculation/draft_check.py" line="114" />
      <source>{name} is an MTP head for {draft_arch}, which this engine does not run.</source>
      <translation>{name} は {draft_arch} 用の MTP ヘッドですが、このエンジンはそれを実行できません。</translation>
    </message>
    <message>
      <location filename="../../app/draftwise/core/speculation/draft_check.py" line="133" />
      <source>{name} has {n} MTP layers, but this engine's {arch} MTP runs only one (it would stop at the first draft).</source>
      <translation>{name} の MTP は {n} 層ですが、このエンジンの {arch} 用 MTP は 1 層しか動かせません（最初のドラフトで止まります）。</translation>
    </message>
    <message>
      <location filename="../../app/draftwise/core/speculation/draft_check.py" line="143" />
      <source>this engine runs no MTP assistant of architecture {draft_arch}</source>
      <translation>このエンジンはアーキテクチャ {draft_arch} の MTP アシスタントを動かせません</translation>
    </message>
    <message>
      <location filename="../../app/draftwise/core/speculation/draft_check.py" line="145" />
      <source>it is the MTP assistant of {target_arch} models, not {arch}</source>
      <translation>{arch} ではなく {target_arch} モデル用の MTP アシスタントです</translation>
    </message>
    <message>
      <location filename="../../app/draftwise/core/speculation/draft_check.py" line="148" />
      <source>it lacks the nextn.pre_projection tensor the engine loads</source>
      <translation>エンジンが読み込む nextn.pre_projection テンソルがありません</translation>
    </message>
    <message>
      <location filename="../../app/draftwise/core/speculation/draft_check.py" line="150" />
      <source>it was made for a model {width} wide, and this one is {model_width} wide</source>
      <translation>幅 {width} のモデル用ですが、このモデルの幅は {model_width} です</translation>
    </message>
    <message>
      <location filename="../../app/draftwise/core/speculation/draft_check.py" line="154" />
      <source>the model's last two layers are not the windowed and global pair whose KV cache it reads</source>
      <translation>モデルの最後の 2 層が、アシスタントが KV キャッシュを読むスライディングウィンドウ層と全体注意層の組になっていません</translation>
    </message>
    <message>
      <location filename="../../app/draftwise/core/speculation/field_settings.py" line="50" />
      <source>It drafts {n} tokens at a time and stops at p-min {p}, as reported for the MTP heads of {family}, until Draftwise measures it here.</source>
      <translation>{family} の MTP ヘッドで報告されているとおり、一度に {n} トークンを下書きし、p-min {p} で止めます (Draftwise がここで測定するまで)。</translation>
    </message>
    <message>
      <location filename="../../app/draftwise/core/speculation/pairing.py" line="174" />
      <source>{count} token ids only the model has ({ids}) are banned on the model (-l ID-inf): no reply needs them, and the draft cannot take them.</source>
      <translation>モデルにしかないトークン ID {count} 個（{ids}）をモデル側で禁止します（-l ID-inf）。どの応答にも不要で、ドラフトは扱えないためです。</translation>
    </message>
    <message>
      <location filename="../../app/draftwise/core/speculation/pairing.py" line="193" />
      <source>the draft</source>
      <translation>ドラフト</translation>
    </message>
    <message>
      <location filename="../../app/draftwise/core/speculation/pairing.py" line="193" />
      <source>the model</source>
      <translation>モデル</translation>
    </message>
    <message>
      <location filename="../../app/draftwise/core/speculation/pairing.py" line="194" />
      <source>{side} has no vocabulary the engine can compare (tokenizer {tokenizer})</source>
      <translation>{side}にはエンジンが比べられる語彙がありません（トークナイザー: {tokenizer}）</translation>
    </message>
    <message>
      <location filename="../../app/draftwise/core/speculation/pairing.py" line="197" />
      <source>its tokenizer type differs ({draft} in the draft, {target} in the model)</source>
      <translation>トークナイザーの種類が違います（ドラフトは {draft}、モデルは {target}）</translation>
    </message>
    <message>
      <location filename="../../app/draftwise/core/speculation/pairing.py" line="200" />
      <source>it adds a BOS token differently (add_bos {draft} in the draft, {target} in the model)</source>
      <translation>BOS トークンの付け方が違います（add_bos: ドラフトは {draft}、モデルは {target}）</translation>
    </message>
    <message>
      <location filename="../../app/draftwise/core/speculation/pairing.py" line="203" />
      <source>its BOS token differs (id {draft} in the draft, {target} in the model)</source>
      <translation>BOS トークンが違います（ドラフトは ID {draft}、モデルは {target}）</translation>
    </message>
    <message>
      <location filename="../../app/draftwise/core/speculation/pairing.py" line="206" />
      <source>it adds an EOS token differently (add_eos {draft} in the draft, {target} in the model)</source>
      <translation>EOS トークンの付け方が違います（add_eos: ドラフトは {draft}、モデルは {target}）</translation>
    </message>
    <message>
      <location filename="../../app/draftwise/core/speculation/pairing.py" line="209" />
      <source>its EOS token differs (id {draft} in the draft, {target} in the model)</source>
      <translation>EOS トークンが違います（ドラフトは ID {draft}、モデルは {target}）</translation>
    </message>
    <message>
      <location filename="../../app/draftwise/core/speculation/pairing.py" line="213" />
      <source>its vocabulary size differs by {diff} tokens ({draft} in the draft, {target} in the model; the engine allows {limit})</source>
      <translation>語彙の大きさが {diff} トークン違います（ドラフトは {draft}、モデルは {target}。エンジンが認める差は {limit} まで）</translation>
    </message>
    <message>
      <location filename="../../app/draftwise/core/speculation/pairing.py" line="221" />
      <source>its token list could not be compared ({error})</source>
      <translation>トークン一覧を比べられませんでした（{error}）</translation>
    </message>
    <message>
      <location filename="../../app/draftwise/core/speculation/pairing.py" line="246" />
      <source>token {id} exists only in the draft and is not padding: the engine would stop mid-reply the first time the draft proposes it (the model's vocabulary ends at {size})</source>
      <translation>トークン {id} はドラフトにしかなく、パディングでもありません。ドラフトがこれを提案した時点でエンジンが応答の途中で止まります（モデルの語彙は {size} で終わります）</translation>
    </message>
    <message>
      <location filename="../../app/draftwise/core/speculation/pairing.py" line="275" />
      <source>token {id} ({text}) exists only in the model and ends a reply: the engine would stop mid-reply when the model writes it, and banning it would change the answers (the draft's vocabulary ends at {size})</source>
      <translation>トークン {id}（{text}）はモデルにしかなく、応答を終えるトークンです。モデルがこれを書くとエンジンが応答の途中で止まり、禁止すると回答が変わってしまいます（ドラフトの語彙は {size} で終わります）</translation>
    </message>
    <message>
      <location filename="../../app/draftwise/core/speculation/pairing.py" line="280" />
      <source>token {id} ({text}) exists only in the model and is text it writes: the engine would stop mid-reply when the model writes it, and banning it would change the answers (the draft's vocabulary ends at {size})</source>
      <translation>トークン {id}（{text}）はモデルにしかなく、モデルが書く文字列です。モデルがこれを書くとエンジンが応答の途中で止まり、禁止すると回答が変わってしまいます（ドラフトの語彙は {size} で終わります）</translation>
    </message>
    <message>
      <location filename="../../app/draftwise/core/speculation/pairing.py" line="285" />
      <source>token {id} ({text}) exists only in the model and its chat template writes it: the engine would stop mid-reply, and banning it would change the answers (the draft's vocabulary ends at {size})</source>
      <translation>トークン {id}（{text}）はモデルにしかなく、チャットテンプレートが書き込みます。エンジンが応答の途中で止まり、禁止すると回答が変わってしまいます（ドラフトの語彙は {size} で終わります）</translation>
    </message>
    <message>
      <location filename="../../app/draftwise/core/speculation/pairing.py" line="300" />
      <source>token {id} differs ({draft} in the draft, {target} in the model)</source>
      <translation>トークン {id} が違います（ドラフトは {draft}、モデルは {target}）</translation>
    </message>
    <message>
      <location filename="../../app/draftwise/core/speculation/pairing.py" line="312" />
      <source>on</source>
      <translation>オン</translation>
    </message>
    <message>
      <location filename="../../app/draftwise/core/speculation/pairing.py" line="312" />
      <source>off</source>
      <translation>オフ</translation>
    </message>
    <message>
      <location filename="../../app/draftwise/core/speculation/resolver.py" line="83" />
      <source>Extra engine arguments may not set the model ({flag}); choose the model in the Model field.</source>
      <translation>エンジンの追加引数ではモデルを指定できません（{flag}）。モデル欄でモデルを選んでください。</translation>
    </message>
    <message>
      <location filename="../../app/draftwise/core/speculation/resolver.py" line="89" />
      <source>Extra engine arguments may not set the draft model ({flag}); use the Draft model field.</source>
      <translation>エンジンの追加引数ではドラフトモデルを指定できません（{flag}）。ドラフトモデル欄を使ってください。</translation>
    </message>
    <message>
      <location filename="../../app/draftwise/core/speculation/resolver.py" line="120" />
      <source>MTP mode must be 'auto' or 'off', not {value}.</source>
      <translation>MTP の設定は 'auto' か 'off' にしてください（{value} は使えません）。</translation>
    </message>
    <message>
      <location filename="../../app/draftwise/core/speculation/resolver.py" line="127" />
      <source>A draft model works only with llama.cpp, not {backend}; clear the Draft model field or choose llama.cpp.</source>
      <translation>ドラフトモデルは llama.cpp でのみ使え、{backend} では使えません。ドラフトモデル欄を空にするか、llama.cpp を選んでください。</translation>
    </message>
    <message>
      <location filename="../../app/draftwise/core/speculation/resolver.py" line="133" />
      <source>MTP on/off applies only to llama.cpp; {backend} decides speculation itself. Set MTP to auto.</source>
      <translation>MTP のオン／オフは llama.cpp にだけ効きます。{backend} は投機的デコードを自分で決めます。MTP を自動にしてください。</translation>
    </message>
    <message>
      <location filename="../../app/draftwise/core/speculation/resolver.py" line="137" />
      <source>Speculative decoding is set up only for llama.cpp; {backend} runs without it.</source>
      <translation>投機的デコードは llama.cpp でのみ設定されます。{backend} では使わずに実行します。</translation>
    </message>
    <message>
      <location filename="../../app/draftwise/core/speculation/resolver.py" line="145" />
      <source>Speculation is off but a draft model is set; clear the Draft model field or set MTP to auto.</source>
      <translation>投機的デコードがオフなのにドラフトモデルが指定されています。ドラフトモデル欄を空にするか、MTP を自動にしてください。</translation>
    </message>
    <message>
      <location filename="../../app/draftwise/core/speculation/resolver.py" line="154" />
      <source>--spec-type needs a value, e.g. --spec-type draft-simple.</source>
      <translation>--spec-type には値が必要です（例: --spec-type draft-simple）。</translation>
    </message>
    <message>
      <location filename="../../app/draftwise/core/speculation/resolver.py" line="159" />
      <source>This engine has no speculative type {type}; it knows {known}.</source>
      <translation>このエンジンには投機的デコードの種類 {type} がありません。使えるのは {known} です。</translation>
    </message>
    <message>
      <location filename="../../app/draftwise/core/speculation/resolver.py" line="162" />
      <source>Your own --spec-type {type} is used; automatic detection was skipped.</source>
      <translation>指定された --spec-type {type} を使います。自動検出は行いませんでした。</translation>
    </message>
    <message>
      <location filename="../../app/draftwise/core/speculation/resolver.py" line="173" />
      <source>The draft model {name} is passed to the engine.</source>
      <translation>ドラフトモデル {name} をエンジンに渡します。</translation>
    </message>
    <message>
      <location filename="../../app/draftwise/core/speculation/resolver.py" line="187" />
      <source>Using your draft model {name} ({kind}).</source>
      <translation>指定されたドラフトモデル {name} を使います（{kind}）。</translation>
    </message>
    <message>
      <location filename="../../app/draftwise/core/speculation/resolver.py" line="200" />
      <source>--split-mode tensor together with speculative decoding crashes some engines; if the engine fails to start, remove one of them.</source>
      <translation>--split-mode tensor と投機的デコードを一緒に使うと、エンジンによってはクラッシュします。エンジンが起動しないときは、どちらかを外してください。</translation>
    </message>
    <message>
      <location filename="../../app/draftwise/core/speculation/resolver.py" line="230" />
      <source>The model has an MTP head, but this engine does not run MTP for {arch} models; looking for a draft model instead.</source>
      <translation>モデルには MTP ヘッドがありますが、このエンジンは {arch} モデルの MTP を実行できません。代わりにドラフトモデルを探します。</translation>
    </message>
    <message>
      <location filename="../../app/draftwise/core/speculation/resolver.py" line="235" />
      <source>The model's MTP head has {n} layers, but this engine's {arch} MTP runs only one (it would stop at the first draft); looking for a draft model instead.</source>
      <translation>このモデルの MTP ヘッドは {n} 層ですが、このエンジンの {arch} 用 MTP は 1 層しか動かせません（最初のドラフトで止まります）。代わりにドラフトモデルを探します。</translation>
    </message>
    <message>
      <location filename="../../app/draftwise/core/speculation/resolver.py" line="241" />
      <source>The model's MTP head made this engine fail before; it is left out.</source>
      <translation>以前このモデルの MTP ヘッドでエンジンが失敗したため、使いません。</translation>
    </message>
    <message>
      <location filename="../../app/draftwise/core/speculation/resolver.py" line="249" />
      <source>MTP head found in the model: speculation is on.</source>
      <translation>モデルに MTP ヘッドがあります: 投機的デコードはオンです。</translation>
    </message>
    <message>
      <location filename="../../app/draftwise/core/speculation/resolver.py" line="256" />
      <source>The model declares an MTP head but this file does not contain it.</source>
      <translation>モデルには MTP ヘッドがあると書かれていますが、このファイルには含まれていません。</translation>
    </message>
    <message>
      <location filename="../../app/draftwise/core/speculation/resolver.py" line="263" />
      <source>Also suitable, not chosen: {names}.</source>
      <translation>ほかにも使えるもの（選ばれませんでした）: {names}。</translation>
    </message>
    <message>
      <location filename="../../app/draftwise/core/speculation/resolver.py" line="275" />
      <source>N-gram speculation made this engine fail before with this model; it is left out.</source>
      <translation>以前このモデルで n-gram 投機的デコードを使うとエンジンが失敗したため、使いません。</translation>
    </message>
    <message>
      <location filename="../../app/draftwise/core/speculation/resolver.py" line="279" />
      <source>No drafter found: n-gram speculation is on (no extra memory).</source>
      <translation>ドラフターが見つかりません: n-gram による投機的デコードをオンにします（追加のメモリは不要です）。</translation>
    </message>
    <message>
      <location filename="../../app/draftwise/core/speculation/resolver.py" line="284" />
      <source>No drafter found: starting without speculation.</source>
      <translation>ドラフターが見つかりません: 投機的デコードなしで起動します。</translation>
    </message>
    <message>
      <location filename="../../app/draftwise/core/speculation/resolver.py" line="292" />
      <source>MTP assistant found beside the model: {name} (it reads the model's own KV cache). Speculation is on.</source>
      <translation>モデルの隣に MTP アシスタントが見つかりました: {name}（モデル自身の KV キャッシュを読みます）。推測はオンです。</translation>
    </message>
    <message>
      <location filename="../../app/draftwise/core/speculation/resolver.py" line="295" />
      <source>MTP head found beside the model in {name}: speculation is on.</source>
      <translation>モデルの隣の {name} に MTP ヘッドがあります: 投機的デコードはオンです。</translation>
    </message>
    <message>
      <location filename="../../app/draftwise/core/speculation/resolver.py" line="297" />
      <source>Draft model found beside the model: {name} ({kind}). Speculation is on.</source>
      <translation>モデルの隣にドラフトモデルがあります: {name}（{kind}）。投機的デコードはオンです。</translation>
    </message>
    <message>
      <location filename="../../app/draftwise/core/speculation/words.py" line="24" />
      <source>n-gram speculation</source>
      <translation>n-gram 照合</translation>
    </message>
    <message>
      <location filename="../../app/draftwise/core/speculation/words.py" line="26" />
      <source>the draft model {name}</source>
      <translation>ドラフトモデル {name}</translation>
    </message>
    <message>
      <location filename="../../app/draftwise/core/speculation/words.py" line="28" />
      <source>the MTP head</source>
      <translation>MTP ヘッド</translation>
    </message>
    <message>
      <location filename="../../app/draftwise/core/speculation/words.py" line="31" />
      <source>{what} with n-gram speculation</source>
      <translation>{what}と n-gram 照合</translation>
    </message>
    <message>
      <location filename="../../app/draftwise/services/drafting_tasks.py" line="133" />
      <source>Your requests no longer call for measuring again.</source>
      <translation>あなたのリクエストからは、もう測り直しの必要はありません。</translation>
    </message>
    <message>
      <location filename="../../app/draftwise/ui/advanced_card.py" line="121" />
      <source>Advanced</source>
      <translation>詳細設定</translation>
    </message>
    <message>
      <location filename="../../app/draftwise/ui/advanced_card.py" line="122" />
      <source>Show advanced settings</source>
      <translation>詳細設定を表示</translation>
    </message>
    <message>
      <location filename="../../app/draftwise/ui/advanced_card.py" line="123" />
      <source>Settings most people never need: engine arguments, profiles, port, language</source>
      <translation>ふつうは不要な設定：エンジン引数、プロファイル、ポート、言語</translation>
    </message>
    <message>
      <location filename="../../app/draftwise/ui/advanced_card.py" line="124" />
      <source>For people who know the engine: everything here is optional.</source>
      <translation>エンジンに詳しい人向けです。ここの設定はすべて任意です。</translation>
    </message>
    <message>
      <location filename="../../app/draftwise/ui/advanced_card.py" line="125" />
      <source>Flags passed to llama-server as they are (for experts)</source>
      <translation>llama-server にそのまま渡すフラグ（上級者向け）</translation>
    </message>
    <message>
      <location filename="../../app/draftwise/ui/advanced_card.py" line="126" />
      <source>Named sets of these settings you can apply to any model</source>
      <translation>どのモデルにも適用できる、名前付きの設定の組</translation>
    </message>
    <message>
      <location filename="../../app/draftwise/ui/advanced_card.py" line="127" />
      <source>What you changed for this model; Reset goes back to automatic</source>
      <translation>このモデルで変更した点。「自動に戻す」で元に戻ります</translation>
    </message>
    <message>
      <location filename="../../app/draftwise/ui/advanced_card.py" line="128" />
      <source>The network port programs connect to; if it is taken, the engine uses a free one and says so</source>
      <translation>プログラムが接続するネットワークポート。使用中なら空いているポートを使い、そのことを表示します</translation>
    </message>
    <message>
      <location filename="../../app/draftwise/ui/advanced_card.py" line="130" />
      <source>Exactly what Launch runs: the engine's own terms</source>
      <translation>「起動」で実行される内容そのもの（エンジンの用語）</translation>
    </message>
    <message>
      <location filename="../../app/draftwise/ui/advanced_card.py" line="131" />
      <source>Extra engine arguments</source>
      <translation>エンジンの追加引数</translation>
    </message>
    <message>
      <location filename="../../app/draftwise/ui/advanced_card.py" line="132" />
      <source>e.g. --spec-draft-n-max 4</source>
      <translation>例: --spec-draft-n-max 4</translation>
    </message>
    <message>
      <location filename="../../app/draftwise/ui/advanced_card.py" line="134" />
      <source>Profiles</source>
      <translation>プロファイル</translation>
    </message>
    <message>
      <location filename="../../app/draftwise/ui/advanced_card.py" line="136" />
      <source>Apply</source>
      <translation>適用</translation>
    </message>
    <message>
      <location filename="../../app/draftwise/ui/advanced_card.py" line="137" />
      <source>Use this profile's settings for the chosen model</source>
      <translation>このプロファイルの設定を選んだモデルに使う</translation>
    </message>
    <message>
      <location filename="../../app/draftwise/ui/advanced_card.py" line="138" />
      <source>Save as…</source>
      <translation>名前を付けて保存…</translation>
    </message>
    <message>
      <location filename="../../app/draftwise/ui/advanced_card.py" line="139" />
      <source>Keep the current settings under a name</source>
      <translation>今の設定に名前を付けて保存</translation>
    </message>
    <message>
      <location filename="../../app/draftwise/ui/advanced_card.py" line="140" />
      <source>Delete</source>
      <translation>削除</translation>
    </message>
    <message>
      <location filename="../../app/draftwise/ui/advanced_card.py" line="141" />
      <source>Forget this profile</source>
      <translation>このプロファイルを削除</translation>
    </message>
    <message>
      <location filename="../../app/draftwise/ui/advanced_card.py" line="143" />
      <source>This model</source>
      <translation>このモデル</translation>
    </message>
    <message>
      <location filename="../../app/draftwise/ui/advanced_card.py" line="144" />
      <source>Reset to automatic</source>
      <translation>自動に戻す</translation>
    </message>
    <message>
      <location filename="../../app/draftwise/ui/advanced_card.py" line="145" />
      <source>Reset this model's settings to automatic</source>
      <translation>このモデルの設定を自動に戻す</translation>
    </message>
    <message>
      <location filename="../../app/draftwise/ui/advanced_card.py" line="147" />
      <source>Language</source>
      <translation>言語</translation>
    </message>
    <message>
      <location filename="../../app/draftwise/ui/advanced_card.py" line="148" />
      <source>Port</source>
      <translation>ポート</translation>
    </message>
    <message>
      <location filename="../../app/draftwise/ui/advanced_card.py" line="149" />
      <source>Port the engine listens on</source>
      <translation>エンジンが待ち受けるポート</translation>
    </message>
    <message>
      <location filename="../../app/draftwise/ui/advanced_card.py" line="150" />
      <source>Allow other computers on my network (with the API key)</source>
      <translation>ネットワーク上の他のコンピュータからの接続を許可する（API キーが必要）</translation>
    </message>
    <message>
      <location filename="../../app/draftwise/ui/advanced_card.py" line="151" />
      <source>Allow other computers on my network</source>
      <translation>ネットワーク上の他のコンピュータからの接続を許可する</translation>
    </message>
    <message>
      <location filename="../../app/draftwise/ui/advanced_card.py" line="152" />
      <source>Other computers on your network can use the model if they know the API key; off: only this computer</source>
      <translation>API キーを知っていれば、ネットワーク上の他のコンピューターもモデルを使えます。オフ：このコンピューターだけ</translation>
    </message>
    <message>
      <location filename="../../app/draftwise/ui/advanced_card.py" line="155" />
      <source>The language of Draftwise's window</source>
      <translation>Draftwise の画面の言語</translation>
    </message>
    <message>
      <location filename="../../app/draftwise/ui/advanced_card.py" line="157" />
      <source>Engine command (the API key is passed in the environment)</source>
      <translation>エンジンのコマンド（API キーは環境変数で渡されます）</translation>
    </message>
    <message>
      <location filename="../../app/draftwise/ui/advanced_card.py" line="158" />
      <source>Engine command</source>
      <translation>エンジンのコマンド</translation>
    </message>
    <message>
      <location filename="../../app/draftwise/ui/advanced_card.py" line="195" />
      <source>context {0}</source>
      <translation>コンテキスト {0}</translation>
    </message>
    <message>
      <location filename="../../app/draftwise/ui/advanced_card.py" line="197" />
      <source>KV {0}</source>
      <translation>KV {0}</translation>
    </message>
    <message>
      <location filename="../../app/draftwise/ui/advanced_card.py" line="199" />
      <source>speculation {0}</source>
      <translation>投機的デコード {0}</translation>
    </message>
    <message>
      <location filename="../../app/draftwise/ui/advanced_card.py" line="199" />
      <source>Off</source>
      <translation>オフ</translation>
    </message>
    <message>
      <location filename="../../app/draftwise/ui/advanced_card.py" line="201" />
      <source>draft {0}</source>
      <translation>ドラフト {0}</translation>
    </message>
    <message>
      <location filename="../../app/draftwise/ui/advanced_card.py" line="203" />
      <source>extra arguments</source>
      <translation>追加引数</translation>
    </message>
    <message>
      <location filename="../../app/draftwise/ui/advanced_card.py" line="204" />
      <source>All automatic.</source>
      <translation>すべて自動です。</translation>
    </message>
    <message>
      <location filename="../../app/draftwise/ui/advanced_card.py" line="221" />
      <source>Save profile</source>
      <translation>プロファイルを保存</translation>
    </message>
    <message>
      <location filename="../../app/draftwise/ui/advanced_card.py" line="221" />
      <source>Name of the profile:</source>
      <translation>プロファイル名:</translation>
    </message>
    <message>
      <location filename="../../app/draftwise/ui/chat_panel.py" line="233" />
      <source>New chat</source>
      <translation>新しいチャット</translation>
    </message>
    <message>
      <location filename="../../app/draftwise/ui/chat_panel.py" line="234" />
      <source>Start a new chat</source>
      <translation>新しいチャットを始める</translation>
    </message>
    <message>
      <location filename="../../app/draftwise/ui/chat_panel.py" line="235" />
      <source>More</source>
      <translation>詳細</translation>
    </message>
    <message>
      <location filename="../../app/draftwise/ui/chat_panel.py" line="236" />
      <source>Show more chat settings</source>
      <translation>チャットの詳細設定を表示</translation>
    </message>
    <message>
      <location filename="../../app/draftwise/ui/chat_panel.py" line="237" />
      <source>Chats of this session</source>
      <translation>このセッションのチャット</translation>
    </message>
    <message>
      <location filename="../../app/draftwise/ui/chat_panel.py" line="238" />
      <source>System prompt</source>
      <translation>システムプロンプト</translation>
    </message>
    <message>
      <location filename="../../app/draftwise/ui/chat_panel.py" line="239" />
      <source>e.g. Answer briefly.</source>
      <translation>例: 簡潔に答えてください。</translation>
    </message>
    <message>
      <location filename="../../app/draftwise/ui/chat_panel.py" line="241" />
      <source>Temperature</source>
      <translation>温度</translation>
    </message>
    <message>
      <location filename="../../app/draftwise/ui/chat_panel.py" line="242" />
      <source>engine default</source>
      <translation>エンジンの既定値</translation>
    </message>
    <message>
      <location filename="../../app/draftwise/ui/chat_panel.py" line="244" />
      <source>Max tokens</source>
      <translation>最大トークン数</translation>
    </message>
    <message>
      <location filename="../../app/draftwise/ui/chat_panel.py" line="245" />
      <source>no limit</source>
      <translation>制限なし</translation>
    </message>
    <message>
      <location filename="../../app/draftwise/ui/chat_panel.py" line="246" />
      <source>Max tokens per reply</source>
      <translation>1 回の返答の最大トークン数</translation>
    </message>
    <message>
      <location filename="../../app/draftwise/ui/chat_panel.py" line="247" />
      <source>Keep chats on this computer (in the data folder)</source>
      <translation>チャットをこのコンピューターに保存する（データフォルダー）</translation>
    </message>
    <message>
      <location filename="../../app/draftwise/ui/chat_panel.py" line="248" />
      <source>Keep my last prompts on this computer to measure speed on them</source>
      <translation>直近のプロンプトをこのコンピューターに保存し、速度の測定に使う</translation>
    </message>
    <message>
      <location filename="../../app/draftwise/ui/chat_panel.py" line="249" />
      <source>The last {0} prompts per model, this chat's and those other programs send the engines Draftwise starts, never sent anywhere: Draftwise measures speculation again on them when your requests suggest another setting is faster. Unchecking deletes the ones kept.</source>
      <translation>モデルごとに直近 {0} 件のプロンプト（このチャットのものと、Draftwise が起動したエンジンへほかのプログラムが送ったもの。どこにも送信されません）。あなたのリクエストから別の設定の方が速いと見られるとき、Draftwise はこれらで投機的デコードを測定し直します。チェックを外すと保存済みのものは削除されます。</translation>
    </message>
    <message>
      <location filename="../../app/draftwise/ui/chat_panel.py" line="253" />
      <source>Message to the model</source>
      <translation>モデルへのメッセージ</translation>
    </message>
    <message>
      <location filename="../../app/draftwise/ui/chat_panel.py" line="254" />
      <source>Send the message</source>
      <translation>メッセージを送信</translation>
    </message>
    <message>
      <location filename="../../app/draftwise/ui/chat_panel.py" line="255" />
      <source>Stop</source>
      <translation>停止</translation>
    </message>
    <message>
      <location filename="../../app/draftwise/ui/chat_panel.py" line="256" />
      <source>Stop the reply</source>
      <translation>返答を止める</translation>
    </message>
    <message>
      <location filename="../../app/draftwise/ui/chat_panel.py" line="257" />
      <source>Stop the reply and keep what came (Esc)</source>
      <translation>返答を止め、届いた分は残します (Esc)</translation>
    </message>
    <message>
      <location filename="../../app/draftwise/ui/chat_panel.py" line="258" />
      <source>Launch</source>
      <translation>起動</translation>
    </message>
    <message>
      <location filename="../../app/draftwise/ui/chat_panel.py" line="259" />
      <source>Launch the model</source>
      <translation>モデルを起動</translation>
    </message>
    <message>
      <location filename="../../app/draftwise/ui/chat_pictures.py" line="34" />
      <source>Picture {name}</source>
      <translation>画像 {name}</translation>
    </message>
    <message>
      <location filename="../../app/draftwise/ui/chat_pictures.py" line="46" />
      <source>pasted picture</source>
      <translation>貼り付けた画像</translation>
    </message>
    <message>
      <location filename="../../app/draftwise/ui/chat_pictures.py" line="77" />
      <source>Attach picture…</source>
      <translation>画像を添付…</translation>
    </message>
    <message>
      <location filename="../../app/draftwise/ui/chat_pictures.py" line="78" />
      <source>Add a picture to the message (or drop one here, or paste it)</source>
      <translation>メッセージに画像を追加します（ここにドロップするか、貼り付けても追加できます）</translation>
    </message>
    <message>
      <location filename="../../app/draftwise/ui/chat_pictures.py" line="82" />
      <source>Attach picture</source>
      <translation>画像を添付</translation>
    </message>
    <message>
      <location filename="../../app/draftwise/ui/chat_pictures.py" line="83" />
      <source>Pictures (*.png *.jpg *.jpeg *.gif *.bmp *.webp);;All files (*)</source>
      <translation>画像 (*.png *.jpg *.jpeg *.gif *.bmp *.webp);;すべてのファイル (*)</translation>
    </message>
    <message>
      <location filename="../../app/draftwise/ui/chat_pictures.py" line="102" />
      <source>Remove the picture {name}</source>
      <translation>画像 {name} を外す</translation>
    </message>
    <message>
      <location filename="../../app/draftwise/ui/chat_turns.py" line="160" />
      <source>Copy</source>
      <translation>コピー</translation>
    </message>
    <message>
      <location filename="../../app/draftwise/ui/chat_turns.py" line="161" />
      <source>Copy this message</source>
      <translation>このメッセージをコピー</translation>
    </message>
    <message>
      <location filename="../../app/draftwise/ui/chat_turns.py" line="162" />
      <source>Copy this message as Markdown</source>
      <translation>このメッセージを Markdown のままコピー</translation>
    </message>
    <message>
      <location filename="../../app/draftwise/ui/chat_turns.py" line="183" />
      <source>Reasoning ({0} words)</source>
      <translation>思考過程（{0} 語）</translation>
    </message>
    <message>
      <location filename="../../app/draftwise/ui/chat_turns.py" line="197" />
      <source>Copied</source>
      <translation>コピーしました</translation>
    </message>
    <message>
      <location filename="../../app/draftwise/ui/check_dialog.py" line="61" />
      <source>Check this machine</source>
      <translation>このマシンをチェック</translation>
    </message>
    <message>
      <location filename="../../app/draftwise/ui/check_dialog.py" line="63" />
      <source>Run again</source>
      <translation>もう一度実行</translation>
    </message>
    <message>
      <location filename="../../app/draftwise/ui/check_dialog.py" line="64" />
      <source>Run the check again</source>
      <translation>チェックをもう一度実行</translation>
    </message>
    <message>
      <location filename="../../app/draftwise/ui/check_dialog.py" line="65" />
      <source>Check steps</source>
      <translation>チェックの手順</translation>
    </message>
    <message>
      <location filename="../../app/draftwise/ui/device_picker.py" line="40" />
      <source>Device</source>
      <translation>デバイス</translation>
    </message>
    <message>
      <location filename="../../app/draftwise/ui/device_picker.py" line="41" />
      <source>Keep free</source>
      <translation>空けておく量</translation>
    </message>
    <message>
      <location filename="../../app/draftwise/ui/device_picker.py" line="43" />
      <source>Memory this GPU keeps free for other programs (default 1 GB)</source>
      <translation>この GPU でほかのプログラムのために空けておくメモリー（既定は 1 GB）</translation>
    </message>
    <message>
      <location filename="../../app/draftwise/ui/drafting_card.py" line="79" />
      <source>Measure speed</source>
      <translation>速度を測定</translation>
    </message>
    <message>
      <location filename="../../app/draftwise/ui/drafting_card.py" line="80" />
      <source>A few settings, with speculation and without: a few minutes.</source>
      <translation>いくつかの設定を、投機的デコードありとなしで測ります（数分）。</translation>
    </message>
    <message>
      <location filename="../../app/draftwise/ui/drafting_card.py" line="81" />
      <source>Measure all settings</source>
      <translation>すべての設定を測定</translation>
    </message>
    <message>
      <location filename="../../app/draftwise/ui/drafting_card.py" line="82" />
      <source>Every setting the engine and the files allow (each kind of speculation, combined ones, draft lengths, confidence cut-off): several times longer. The fastest is used from then on.</source>
      <translation>エンジンとファイルで使えるすべての設定（投機の種類ごと、その組み合わせ、ドラフト長、確信度のしきい値）を試します。数倍の時間がかかります。以後は最速の設定が使われます。</translation>
    </message>
    <message>
      <location filename="../../app/draftwise/ui/drafting_card.py" line="85" />
      <source>Stop measuring</source>
      <translation>測定を中止</translation>
    </message>
    <message>
      <location filename="../../app/draftwise/ui/drafting_card.py" line="86" />
      <source>Forget measurement</source>
      <translation>測定結果を消去</translation>
    </message>
    <message>
      <location filename="../../app/draftwise/ui/drafting_card.py" line="87" />
      <source>Not now</source>
      <translation>今はしない</translation>
    </message>
    <message>
      <location filename="../../app/draftwise/ui/drafting_card.py" line="88" />
      <source>Turn speculation off for this model</source>
      <translation>このモデルの投機的デコードをオフにする</translation>
    </message>
    <message>
      <location filename="../../app/draftwise/ui/drafting_card.py" line="89" />
      <source>Measure new model and drafter pairs without asking</source>
      <translation>新しいモデルとドラフターの組み合わせは確認せずに測定する</translation>
    </message>
    <message>
      <location filename="../../app/draftwise/ui/drafting_card.py" line="106" />
      <source>Measured with all settings: {0}</source>
      <translation>すべての設定で測定: {0}</translation>
    </message>
    <message>
      <location filename="../../app/draftwise/ui/drafting_card.py" line="106" />
      <source>Measured: {0}</source>
      <translation>測定結果: {0}</translation>
    </message>
    <message>
      <location filename="../../app/draftwise/ui/get_models_dialog.py" line="38" />
      <source>File</source>
      <translation>ファイル</translation>
    </message>
    <message>
      <location filename="../../app/draftwise/ui/get_models_dialog.py" line="38" />
      <source>Quality</source>
      <translation>品質</translation>
    </message>
    <message>
      <location filename="../../app/draftwise/ui/get_models_dialog.py" line="38" />
      <source>Size</source>
      <translation>サイズ</translation>
    </message>
    <message>
      <location filename="../../app/draftwise/ui/get_models_dialog.py" line="38" />
      <source>Fits here?</source>
      <translation>収まる?</translation>
    </message>
    <message>
      <location filename="../../app/draftwise/ui/get_models_dialog.py" line="38" />
      <source>Context</source>
      <translation>コンテキスト</translation>
    </message>
    <message>
      <location filename="../../app/draftwise/ui/get_models_dialog.py" line="38" />
      <source>Planned</source>
      <translation>計画</translation>
    </message>
    <message>
      <location filename="../../app/draftwise/ui/get_models_dialog.py" line="39" />
      <source>Speed here</source>
      <translation>この PC での速さ</translation>
    </message>
    <message>
      <location filename="../../app/draftwise/ui/get_models_dialog.py" line="39" />
      <source>Drafting</source>
      <translation>下書き</translation>
    </message>
    <message>
      <location filename="../../app/draftwise/ui/get_models_dialog.py" line="45" />
      <source>How strongly the weights are compressed: Q4_K_M is a good balance; Q8_0 is closer to the original and twice the size.</source>
      <translation>重みの圧縮の強さです。Q4_K_M がバランスのよい選択で、Q8_0 は元に近い代わりにサイズが約2倍です。</translation>
    </message>
    <message>
      <location filename="../../app/draftwise/ui/get_models_dialog.py" line="47" />
      <source>Each file is planned from its own header (read from the hub, a few MB at most) exactly as a downloaded file would be: nothing is downloaded to judge it.</source>
      <translation>各ファイルは自身のヘッダー(ハブから読む、多くても数 MB)から、ダウンロード済みのファイルとまったく同じように計画されます。判断のために何もダウンロードしません。</translation>
    </message>
    <message>
      <location filename="../../app/draftwise/ui/get_models_dialog.py" line="49" />
      <source>The memory the plan uses in all: weights, context, compute buffers, drafter and projector.</source>
      <translation>計画が使うメモリーの合計: 重み、コンテキスト、計算バッファー、ドラフターとプロジェクター。</translation>
    </message>
    <message>
      <location filename="../../app/draftwise/ui/get_models_dialog.py" line="50" />
      <source>What guesses the next words for it: its own MTP head, its MTP assistant, a small helper model downloaded beside it, or nothing.</source>
      <translation>次の言葉を推測するもの: 自身の MTP ヘッド、MTP アシスタント、隣にダウンロードされる小さな補助モデル、またはなし。</translation>
    </message>
    <message>
      <location filename="../../app/draftwise/ui/get_models_dialog.py" line="62" />
      <source>Get models</source>
      <translation>モデルを入手</translation>
    </message>
    <message>
      <location filename="../../app/draftwise/ui/get_models_dialog.py" line="67" />
      <source>Pick a starter model for this computer, or search the model hub. Each file is judged for this computer before anything is downloaded. Models go into {folder} and appear in your library.</source>
      <translation>このコンピューター向けのおすすめから選ぶか、モデルハブを検索してください。各ファイルはダウンロードする前にこのコンピューター向けに判断されます。モデルは {folder} に保存され、ライブラリーに表示されます。</translation>
    </message>
    <message>
      <location filename="../../app/draftwise/ui/get_models_dialog.py" line="82" />
      <source>Search the hub, e.g. qwen 7b</source>
      <translation>ハブを検索（例: qwen 7b）</translation>
    </message>
    <message>
      <location filename="../../app/draftwise/ui/get_models_dialog.py" line="83" />
      <source>Search</source>
      <translation>検索</translation>
    </message>
    <message>
      <location filename="../../app/draftwise/ui/get_models_dialog.py" line="90" />
      <source>Starters for this computer</source>
      <translation>このコンピューター向けのおすすめ</translation>
    </message>
    <message>
      <location filename="../../app/draftwise/ui/get_models_dialog.py" line="91" />
      <source>The largest model that still writes at least about 8 tokens a second here comes first; slower ones are below it. A double click downloads one.</source>
      <translation>このコンピューターで毎秒約 8 トークン以上書ける中で一番大きいモデルが先頭です。それより遅いものは下に並びます。ダブルクリックでダウンロードします。</translation>
    </message>
    <message>
      <location filename="../../app/draftwise/ui/get_models_dialog.py" line="102" />
      <source>Choose a model on the left to see its files.</source>
      <translation>左でモデルを選ぶと、ファイルが表示されます。</translation>
    </message>
    <message>
      <location filename="../../app/draftwise/ui/get_models_dialog.py" line="125" />
      <source>A small model of the same family guesses the next words and the big model checks them: same answers, faster. It is saved beside the model, where Draftwise finds it.</source>
      <translation>同じ系列の小さなモデルが次の言葉を予想し、大きなモデルがそれを確かめます。答えは同じで、より速くなります。モデルと同じフォルダーに保存され、Draftwise が自動で見つけます。</translation>
    </message>
    <message>
      <location filename="../../app/draftwise/ui/get_models_dialog.py" line="131" />
      <source>A vision model's eyes: the mmproj file turns a picture into words the model reads. It is saved beside the model, and the launch passes it to the engine.</source>
      <translation>視覚モデルの目です。mmproj ファイルが画像をモデルの読める形に変えます。モデルの隣に保存され、起動時にエンジンへ渡されます。</translation>
    </message>
    <message>
      <location filename="../../app/draftwise/ui/get_models_dialog.py" line="134" />
      <source>Download</source>
      <translation>ダウンロード</translation>
    </message>
    <message>
      <location filename="../../app/draftwise/ui/get_models_dialog.py" line="246" />
      <source>, {time} left</source>
      <translation>、残り {time}</translation>
    </message>
    <message>
      <location filename="../../app/draftwise/ui/get_models_dialog.py" line="247" />
      <source>{done} of {total} — {speed}/s{left}</source>
      <translation>{total} 中 {done} — {speed}/秒{left}</translation>
    </message>
    <message>
      <location filename="../../app/draftwise/ui/get_models_dialog.py" line="256" />
      <source>  (asks for an access token)</source>
      <translation>  （アクセストークンが必要）</translation>
    </message>
    <message>
      <location filename="../../app/draftwise/ui/get_models_dialog.py" line="259" />
      <source>{n} downloads</source>
      <translation>{n} ダウンロード</translation>
    </message>
    <message>
      <location filename="../../app/draftwise/ui/get_models_dialog.py" line="269" />
      <source>Searching the hub…</source>
      <translation>ハブを検索中…</translation>
    </message>
    <message>
      <location filename="../../app/draftwise/ui/get_models_dialog.py" line="271" />
      <source>Choose a repository on the left to see its files.</source>
      <translation>左のリポジトリを選ぶと、そのファイルが表示されます。</translation>
    </message>
    <message>
      <location filename="../../app/draftwise/ui/get_models_dialog.py" line="292" />
      <source>Still judging this file: a moment.</source>
      <translation>このファイルを判断中です。少しお待ちください。</translation>
    </message>
    <message>
      <location filename="../../app/draftwise/ui/get_models_dialog.py" line="309" />
      <source> in {n} parts</source>
      <translation>（{n} 分割）</translation>
    </message>
    <message>
      <location filename="../../app/draftwise/ui/launch_card.py" line="107" />
      <source>Engine</source>
      <translation>エンジン</translation>
    </message>
    <message>
      <location filename="../../app/draftwise/ui/launch_card.py" line="109" />
      <source>The program that runs the model on this computer (llama.cpp's llama-server)</source>
      <translation>このコンピューターでモデルを動かすプログラム（llama.cpp の llama-server）</translation>
    </message>
    <message>
      <location filename="../../app/draftwise/ui/launch_card.py" line="112" />
      <source>Install engine</source>
      <translation>エンジンをインストール</translation>
    </message>
    <message>
      <location filename="../../app/draftwise/ui/launch_card.py" line="113" />
      <source>Install the llama.cpp engine</source>
      <translation>llama.cpp エンジンをインストール</translation>
    </message>
    <message>
      <location filename="../../app/draftwise/ui/launch_card.py" line="114" />
      <source>Download and build the engine for this computer (once; 10–40 minutes)</source>
      <translation>このコンピューター用のエンジンをダウンロードしてビルドします（初回のみ、10〜40 分）</translation>
    </message>
    <message>
      <location filename="../../app/draftwise/ui/launch_card.py" line="115" />
      <source>Engine installation progress</source>
      <translation>エンジンのインストール状況</translation>
    </message>
    <message>
      <location filename="../../app/draftwise/ui/launch_card.py" line="118" />
      <source>Start the engine with this model (Ctrl+L)</source>
      <translation>このモデルでエンジンを起動 (Ctrl+L)</translation>
    </message>
    <message>
      <location filename="../../app/draftwise/ui/launch_card.py" line="119" />
      <source>Try full settings again</source>
      <translation>本来の設定でもう一度試す</translation>
    </message>
    <message>
      <location filename="../../app/draftwise/ui/launch_card.py" line="120" />
      <source>Forget the lower settings this model needed after running out of memory</source>
      <translation>メモリ不足の後にこのモデルで使った低い設定を忘れます</translation>
    </message>
    <message>
      <location filename="../../app/draftwise/ui/launch_card.py" line="122" />
      <source>Stop the engine</source>
      <translation>エンジンを停止</translation>
    </message>
    <message>
      <location filename="../../app/draftwise/ui/launch_card.py" line="123" />
      <source>Stop the engine (Ctrl+.)</source>
      <translation>エンジンを停止 (Ctrl+.)</translation>
    </message>
    <message>
      <location filename="../../app/draftwise/ui/launch_card.py" line="124" />
      <source>Stop and launch this one</source>
      <translation>停止してこれを起動</translation>
    </message>
    <message>
      <location filename="../../app/draftwise/ui/launch_card.py" line="125" />
      <source>Stop the running model and launch the chosen one</source>
      <translation>実行中のモデルを停止し、選んだモデルを起動</translation>
    </message>
    <message>
      <location filename="../../app/draftwise/ui/launch_card.py" line="126" />
      <source>Stop the model that runs now, wait until it has ended, then launch this one</source>
      <translation>今動いているモデルを停止し、終了を待ってからこのモデルを起動します</translation>
    </message>
    <message>
      <location filename="../../app/draftwise/ui/launch_card.py" line="137" />
      <source>unusable</source>
      <translation>使用不可</translation>
    </message>
    <message>
      <location filename="../../app/draftwise/ui/launch_card.py" line="142" />
      <source>Looking for engines…</source>
      <translation>エンジンを探しています…</translation>
    </message>
    <message>
      <location filename="../../app/draftwise/ui/launch_card.py" line="142" />
      <source>No engine found</source>
      <translation>エンジンが見つかりません</translation>
    </message>
    <message>
      <location filename="../../app/draftwise/ui/library_panel.py" line="164" />
      <source>Search models…</source>
      <translation>モデルを検索…</translation>
    </message>
    <message>
      <location filename="../../app/draftwise/ui/library_panel.py" line="165" />
      <source>Search models</source>
      <translation>モデルを検索</translation>
    </message>
    <message>
      <location filename="../../app/draftwise/ui/library_panel.py" line="166" />
      <source>Model library</source>
      <translation>モデルライブラリ</translation>
    </message>
    <message>
      <location filename="../../app/draftwise/ui/library_panel.py" line="167" />
      <source>Get models…</source>
      <translation>モデルを入手…</translation>
    </message>
    <message>
      <location filename="../../app/draftwise/ui/library_panel.py" line="168" />
      <source>Download a model from the model hub, with its draft model where one exists</source>
      <translation>モデルハブからモデルをダウンロードします（ドラフトモデルがあれば一緒に）</translation>
    </message>
    <message>
      <location filename="../../app/draftwise/ui/library_panel.py" line="169" />
      <source>+ Add folder</source>
      <translation>+ フォルダを追加</translation>
    </message>
    <message>
      <location filename="../../app/draftwise/ui/library_panel.py" line="170" />
      <source>Add a folder of models</source>
      <translation>モデルのフォルダを追加</translation>
    </message>
    <message>
      <location filename="../../app/draftwise/ui/library_panel.py" line="171" />
      <source>Browse…</source>
      <translation>参照…</translation>
    </message>
    <message>
      <location filename="../../app/draftwise/ui/library_panel.py" line="172" />
      <source>Open a model file</source>
      <translation>モデルファイルを開く</translation>
    </message>
    <message>
      <location filename="../../app/draftwise/ui/library_panel.py" line="173" />
      <source>Folders</source>
      <translation>フォルダ</translation>
    </message>
    <message>
      <location filename="../../app/draftwise/ui/library_panel.py" line="174" />
      <source>Model folders</source>
      <translation>モデルフォルダ</translation>
    </message>
    <message>
      <location filename="../../app/draftwise/ui/library_panel.py" line="175" />
      <source>No models yet.

Press Get models… for a starter model chosen for this computer,
add a folder with .gguf models, or drop a .gguf file here.</source>
      <translation>まだモデルがありません。

「モデルを入手…」でこのコンピューター向けのモデルを入手するか、
.gguf モデルのあるフォルダーを追加するか、.gguf ファイルをここにドロップしてください。</translation>
    </message>
    <message>
      <location filename="../../app/draftwise/ui/library_panel.py" line="216" />
      <source>No folders yet</source>
      <translation>フォルダはまだありません</translation>
    </message>
    <message>
      <location filename="../../app/draftwise/ui/library_panel.py" line="220" />
      <source>Remove from the library</source>
      <translation>ライブラリから削除</translation>
    </message>
    <message>
      <location filename="../../app/draftwise/ui/library_panel.py" line="224" />
      <source>Scan again</source>
      <translation>再スキャン</translation>
    </message>
    <message>
      <location filename="../../app/draftwise/ui/logs_panel.py" line="70" />
      <source>Engine log</source>
      <translation>エンジンログ</translation>
    </message>
    <message>
      <location filename="../../app/draftwise/ui/logs_panel.py" line="71" />
      <source>Filter the log…</source>
      <translation>ログを絞り込む…</translation>
    </message>
    <message>
      <location filename="../../app/draftwise/ui/logs_panel.py" line="72" />
      <source>Filter the log</source>
      <translation>ログを絞り込む</translation>
    </message>
    <message>
      <location filename="../../app/draftwise/ui/logs_panel.py" line="76" />
      <source>All lines</source>
      <translation>すべての行</translation>
    </message>
    <message>
      <location filename="../../app/draftwise/ui/logs_panel.py" line="76" />
      <source>Warnings and errors</source>
      <translation>警告とエラー</translation>
    </message>
    <message>
      <location filename="../../app/draftwise/ui/logs_panel.py" line="76" />
      <source>Errors only</source>
      <translation>エラーのみ</translation>
    </message>
    <message>
      <location filename="../../app/draftwise/ui/logs_panel.py" line="79" />
      <source>Log level</source>
      <translation>ログレベル</translation>
    </message>
    <message>
      <location filename="../../app/draftwise/ui/logs_panel.py" line="81" />
      <source>Copy the log</source>
      <translation>ログをコピー</translation>
    </message>
    <message>
      <location filename="../../app/draftwise/ui/logs_panel.py" line="82" />
      <source>Save…</source>
      <translation>保存…</translation>
    </message>
    <message>
      <location filename="../../app/draftwise/ui/logs_panel.py" line="83" />
      <source>Save the log to a file</source>
      <translation>ログをファイルに保存</translation>
    </message>
    <message>
      <location filename="../../app/draftwise/ui/logs_panel.py" line="84" />
      <source>Clear</source>
      <translation>クリア</translation>
    </message>
    <message>
      <location filename="../../app/draftwise/ui/logs_panel.py" line="85" />
      <source>Clear the log</source>
      <translation>ログをクリア</translation>
    </message>
    <message>
      <location filename="../../app/draftwise/ui/logs_panel.py" line="101" />
      <source>{0} lines</source>
      <translation>{0} 行</translation>
    </message>
    <message>
      <location filename="../../app/draftwise/ui/logs_panel.py" line="103" />
      <source>({0} older lines dropped)</source>
      <translation>（古い {0} 行は破棄されました）</translation>
    </message>
    <message>
      <location filename="../../app/draftwise/ui/logs_panel.py" line="110" />
      <source>Save the engine log</source>
      <translation>エンジンログを保存</translation>
    </message>
    <message>
      <location filename="../../app/draftwise/ui/logs_panel.py" line="111" />
      <source>Log files (*.log *.txt)</source>
      <translation>ログファイル (*.log *.txt)</translation>
    </message>
    <message>
      <location filename="../../app/draftwise/ui/logs_panel.py" line="116" />
      <source>Could not save: {0}</source>
      <translation>保存できませんでした: {0}</translation>
    </message>
    <message>
      <location filename="../../app/draftwise/ui/main_window.py" line="236" />
      <source>&amp;Open model…</source>
      <translation>モデルを開く(&amp;O)…</translation>
    </message>
    <message>
      <location filename="../../app/draftwise/ui/main_window.py" line="237" />
      <source>&amp;Add folder…</source>
      <translation>フォルダを追加(&amp;A)…</translation>
    </message>
    <message>
      <location filename="../../app/draftwise/ui/main_window.py" line="238" />
      <source>&amp;Launch</source>
      <translation>起動(&amp;L)</translation>
    </message>
    <message>
      <location filename="../../app/draftwise/ui/main_window.py" line="239" />
      <source>&amp;Stop</source>
      <translation>停止(&amp;S)</translation>
    </message>
    <message>
      <location filename="../../app/draftwise/ui/main_window.py" line="240" />
      <source>&amp;Check this machine</source>
      <translation>このマシンをチェック(&amp;C)</translation>
    </message>
    <message>
      <location filename="../../app/draftwise/ui/main_window.py" line="241" />
      <source>&amp;Install engine</source>
      <translation>エンジンをインストール(&amp;I)</translation>
    </message>
    <message>
      <location filename="../../app/draftwise/ui/main_window.py" line="242" />
      <source>Logs</source>
      <translation>ログ</translation>
    </message>
    <message>
      <location filename="../../app/draftwise/ui/main_window.py" line="243" />
      <source>Show or hide the engine log</source>
      <translation>エンジンログの表示／非表示</translation>
    </message>
    <message>
      <location filename="../../app/draftwise/ui/main_window.py" line="244" />
      <source>&amp;Quit</source>
      <translation>終了(&amp;Q)</translation>
    </message>
    <message>
      <location filename="../../app/draftwise/ui/main_window.py" line="245" />
      <source>&amp;About Draftwise</source>
      <translation>Draftwise について(&amp;A)</translation>
    </message>
    <message>
      <location filename="../../app/draftwise/ui/main_window.py" line="246" />
      <source>&amp;File</source>
      <translation>ファイル(&amp;F)</translation>
    </message>
    <message>
      <location filename="../../app/draftwise/ui/main_window.py" line="247" />
      <source>&amp;Engine</source>
      <translation>エンジン(&amp;E)</translation>
    </message>
    <message>
      <location filename="../../app/draftwise/ui/main_window.py" line="248" />
      <source>&amp;View</source>
      <translation>表示(&amp;V)</translation>
    </message>
    <message>
      <location filename="../../app/draftwise/ui/main_window.py" line="249" />
      <source>&amp;Help</source>
      <translation>ヘルプ(&amp;H)</translation>
    </message>
    <message>
      <location filename="../../app/draftwise/ui/main_window.py" line="255" />
      <source>Model</source>
      <translation>モデル</translation>
    </message>
    <message>
      <location filename="../../app/draftwise/ui/main_window.py" line="256" />
      <source>Chat</source>
      <translation>チャット</translation>
    </message>
    <message>
      <location filename="../../app/draftwise/ui/main_window.py" line="257" />
      <source>Serve</source>
      <translation>サーブ</translation>
    </message>
    <message>
      <location filename="../../app/draftwise/ui/main_window.py" line="258" />
      <source>Serve every model of your library to other programs at one address</source>
      <translation>ライブラリのすべてのモデルを、1つのアドレスでほかのプログラムに提供します</translation>
    </message>
    <message>
      <location filename="../../app/draftwise/ui/main_window.py" line="264" />
      <source>Show Draftwise</source>
      <translation>Draftwise を表示</translation>
    </message>
    <message>
      <location filename="../../app/draftwise/ui/main_window.py" line="265" />
      <source>Stop serving</source>
      <translation>サーブを停止</translation>
    </message>
    <message>
      <location filename="../../app/draftwise/ui/main_window.py" line="337" />
      <source>Open a model</source>
      <translation>モデルを開く</translation>
    </message>
    <message>
      <location filename="../../app/draftwise/ui/main_window.py" line="337" />
      <source>GGUF models (*.gguf)</source>
      <translation>GGUF モデル (*.gguf)</translation>
    </message>
    <message>
      <location filename="../../app/draftwise/ui/main_window.py" line="369" />
      <source>About Draftwise</source>
      <translation>Draftwise について</translation>
    </message>
    <message>
      <location filename="../../app/draftwise/ui/main_window.py" line="370" />
      <source>Draftwise {0}
Run a local LLM with llama.cpp; speculative decoding and MTP are set up for you.</source>
      <translation>Draftwise {0}
llama.cpp でローカル LLM を動かします。投機的デコードと MTP は自動で設定されます。</translation>
    </message>
    <message>
      <location filename="../../app/draftwise/ui/main_window.py" line="445" />
      <source>The engine is running</source>
      <translation>エンジンが実行中です</translation>
    </message>
    <message>
      <location filename="../../app/draftwise/ui/main_window.py" line="446" />
      <source>Stop the engine and quit</source>
      <translation>エンジンを停止して終了</translation>
    </message>
    <message>
      <location filename="../../app/draftwise/ui/main_window.py" line="449" />
      <source>The engine is still running. Stop it, or keep it running in the tray?</source>
      <translation>エンジンはまだ実行中です。停止しますか？それともトレイで実行を続けますか？</translation>
    </message>
    <message>
      <location filename="../../app/draftwise/ui/main_window.py" line="450" />
      <source>Keep running in the tray</source>
      <translation>トレイで実行を続ける</translation>
    </message>
    <message>
      <location filename="../../app/draftwise/ui/main_window.py" line="452" />
      <source>The engine is still running. Stop it and quit?</source>
      <translation>エンジンはまだ動いています。停止して終了しますか？</translation>
    </message>
    <message>
      <location filename="../../app/draftwise/ui/main_window.py" line="467" />
      <source>The engine keeps running. Use the tray icon to stop it.</source>
      <translation>エンジンは実行を続けます。停止するにはトレイアイコンを使ってください。</translation>
    </message>
    <message>
      <location filename="../../app/draftwise/ui/memory_bar.py" line="35" />
      <source>{0} of {1} free</source>
      <translation>空き {1} のうち {0}</translation>
    </message>
    <message>
      <location filename="../../app/draftwise/ui/memory_bar.py" line="56" />
      <source>left: {0}</source>
      <translation>残り: {0}</translation>
    </message>
    <message>
      <location filename="../../app/draftwise/ui/memory_bar.py" line="56" />
      <source>over: {0}</source>
      <translation>超過: {0}</translation>
    </message>
    <message>
      <location filename="../../app/draftwise/ui/memory_card.py" line="29" />
      <source>full quality</source>
      <translation>品質そのまま</translation>
    </message>
    <message>
      <location filename="../../app/draftwise/ui/memory_card.py" line="31" />
      <source>full quality, twice the memory</source>
      <translation>品質そのまま、メモリ 2 倍</translation>
    </message>
    <message>
      <location filename="../../app/draftwise/ui/memory_card.py" line="32" />
      <source>half the memory, nearly the same</source>
      <translation>メモリ半分、品質はほぼ同じ</translation>
    </message>
    <message>
      <location filename="../../app/draftwise/ui/memory_card.py" line="33" />
      <source>a quarter of the memory, lower quality</source>
      <translation>メモリ 4 分の 1、品質はやや低下</translation>
    </message>
    <message>
      <location filename="../../app/draftwise/ui/memory_card.py" line="100" />
      <source>Memory</source>
      <translation>メモリ</translation>
    </message>
    <message>
      <location filename="../../app/draftwise/ui/memory_card.py" line="102" />
      <source>How the model fits in this computer's memory. A longer conversation needs more room.</source>
      <translation>このコンピューターのメモリにモデルがどう収まるか。会話が長いほど多くのメモリが要ります。</translation>
    </message>
    <message>
      <location filename="../../app/draftwise/ui/memory_card.py" line="103" />
      <source>Planned before launch from the model file; once the engine runs, compared with the buffer sizes it reports.</source>
      <translation>起動前にモデルファイルから見積もり、エンジンが動き出したら報告されたバッファサイズと比べます。</translation>
    </message>
    <message>
      <location filename="../../app/draftwise/ui/memory_card.py" line="107" />
      <source>Conversation length</source>
      <translation>会話の長さ</translation>
    </message>
    <message>
      <location filename="../../app/draftwise/ui/memory_card.py" line="108" />
      <source>How much text the model can keep in mind at once — your messages, its answers and any documents — counted in tokens (about ¾ of a word each). This is the context length.</source>
      <translation>モデルが一度に覚えておける文章の量（あなたのメッセージ、回答、文書を含む）をトークン数で数えたものです。これがコンテキスト長です。</translation>
    </message>
    <message>
      <location filename="../../app/draftwise/ui/memory_card.py" line="112" />
      <source>Context length</source>
      <translation>コンテキスト長</translation>
    </message>
    <message>
      <location filename="../../app/draftwise/ui/memory_card.py" line="113" />
      <source>Reset to auto</source>
      <translation>自動に戻す</translation>
    </message>
    <message>
      <location filename="../../app/draftwise/ui/memory_card.py" line="114" />
      <source>Choose the context length automatically</source>
      <translation>コンテキスト長を自動で選ぶ</translation>
    </message>
    <message>
      <location filename="../../app/draftwise/ui/memory_card.py" line="116" />
      <source>Memory format</source>
      <translation>メモリの形式</translation>
    </message>
    <message>
      <location filename="../../app/draftwise/ui/memory_card.py" line="117" />
      <source>How the engine stores the conversation it keeps in mind (the KV cache type). A smaller format fits a longer conversation in less memory, at some cost in quality.</source>
      <translation>エンジンが覚えている会話の保存形式（KV キャッシュの型）。小さい形式ほど少ないメモリで長い会話を扱えますが、品質が少し下がります。</translation>
    </message>
    <message>
      <location filename="../../app/draftwise/ui/memory_card.py" line="121" />
      <source>KV cache type</source>
      <translation>KV キャッシュの型</translation>
    </message>
    <message>
      <location filename="../../app/draftwise/ui/memory_card.py" line="128" />
      <source>Auto</source>
      <translation>自動</translation>
    </message>
    <message>
      <location filename="../../app/draftwise/ui/memory_card.py" line="161" />
      <source>Auto ({0})</source>
      <translation>自動 ({0})</translation>
    </message>
    <message>
      <location filename="../../app/draftwise/ui/memory_card.py" line="182" />
      <source>Why: </source>
      <translation>理由: </translation>
    </message>
    <message>
      <location filename="../../app/draftwise/ui/memory_card.py" line="195" />
      <source>What the engine really uses</source>
      <translation>エンジンが実際に使う量</translation>
    </message>
    <message>
      <location filename="../../app/draftwise/ui/memory_card.py" line="197" />
      <source>Planned: Draftwise's estimate before launch. Actual: the buffer sizes the engine reported in its log.</source>
      <translation>見積もり：起動前の Draftwise の推定。実際：エンジンがログで報告したバッファサイズ。</translation>
    </message>
    <message>
      <location filename="../../app/draftwise/ui/memory_card.py" line="200" />
      <source>planned</source>
      <translation>計画</translation>
    </message>
    <message>
      <location filename="../../app/draftwise/ui/memory_card.py" line="200" />
      <source>actual</source>
      <translation>実際</translation>
    </message>
    <message>
      <location filename="../../app/draftwise/ui/model_details.py" line="56" />
      <source>This model has its own helper built in (an MTP head): faster answers</source>
      <translation>このモデルには補助役が組み込まれています（MTP ヘッド）：回答が速くなります</translation>
    </message>
    <message>
      <location filename="../../app/draftwise/ui/model_details.py" line="81" />
      <source>Model details</source>
      <translation>モデルの詳細</translation>
    </message>
    <message>
      <location filename="../../app/draftwise/ui/model_details.py" line="82" />
      <source>Show model details</source>
      <translation>モデルの詳細を表示</translation>
    </message>
    <message>
      <location filename="../../app/draftwise/ui/model_details.py" line="83" />
      <source>Everything the model file says about itself: size, layers, vocabulary, built-in helper</source>
      <translation>モデルファイルが自分について記していること：サイズ、レイヤー、語彙、組み込みの補助役</translation>
    </message>
    <message>
      <location filename="../../app/draftwise/ui/serve_card.py" line="39" />
      <source>State</source>
      <translation>状態</translation>
    </message>
    <message>
      <location filename="../../app/draftwise/ui/serve_card.py" line="39" />
      <source>Speculation</source>
      <translation>投機的デコード</translation>
    </message>
    <message>
      <location filename="../../app/draftwise/ui/serve_card.py" line="39" />
      <source>Speed-up</source>
      <translation>高速化</translation>
    </message>
    <message>
      <location filename="../../app/draftwise/ui/serve_card.py" line="39" />
      <source>Last request</source>
      <translation>直近のリクエスト</translation>
    </message>
    <message>
      <location filename="../../app/draftwise/ui/serve_card.py" line="41" />
      <source>Paste this line into a terminal to run Claude Code on a served model</source>
      <translation>この行をターミナルに貼り付けると、サーブ中のモデルで Claude Code が動きます</translation>
    </message>
    <message>
      <location filename="../../app/draftwise/ui/serve_card.py" line="42" />
      <source>For Open WebUI, an editor or any program that speaks the OpenAI API: its base URL and key</source>
      <translation>Open WebUI、エディター、OpenAI API を話すプログラム向け: ベース URL とキー</translation>
    </message>
    <message>
      <location filename="../../app/draftwise/ui/serve_card.py" line="43" />
      <source>A test from a terminal: one question to the first model</source>
      <translation>ターミナルからの確認: 最初のモデルに1つ質問します</translation>
    </message>
    <message>
      <location filename="../../app/draftwise/ui/serve_card.py" line="46" />
      <source>OpenAI-compatible</source>
      <translation>OpenAI 互換</translation>
    </message>
    <message>
      <location filename="../../app/draftwise/ui/serve_card.py" line="148" />
      <source>Serve my models</source>
      <translation>モデルをサーブ</translation>
    </message>
    <message>
      <location filename="../../app/draftwise/ui/serve_card.py" line="150" />
      <source>Let other programs — Claude Code, Open WebUI, your editor — use every model in your library at one address. Each model starts when a program asks for it by name, with its own speculation, and rests when it is not used. Launch keeps working beside it.</source>
      <translation>Claude Code、Open WebUI、エディターなどのほかのプログラムが、ライブラリのすべてのモデルを1つのアドレスで使えるようにします。各モデルはプログラムが名前で求めたときに、そのモデル用の投機設定で起動し、使われていないときは休みます。「起動」はこれと並んでそのまま使えます。</translation>
    </message>
    <message>
      <location filename="../../app/draftwise/ui/serve_card.py" line="153" />
      <source>One llama.cpp engine in router mode serves the OpenAI and Anthropic APIs; each model runs the plan the Model page shows for it, and only as many stay loaded together as fit this computer.</source>
      <translation>ルーターモードの llama.cpp エンジン1つが OpenAI と Anthropic の API を提供します。各モデルはモデルページに表示される計画で動き、同時に読み込まれるのはこのコンピューターに収まる数だけです。</translation>
    </message>
    <message>
      <location filename="../../app/draftwise/ui/serve_card.py" line="156" />
      <source>Serve every model of the library</source>
      <translation>ライブラリのすべてのモデルをサーブ</translation>
    </message>
    <message>
      <location filename="../../app/draftwise/ui/serve_card.py" line="157" />
      <source>Start serving every model of your library folders at one address</source>
      <translation>ライブラリフォルダーのすべてのモデルを1つのアドレスでサーブし始めます</translation>
    </message>
    <message>
      <location filename="../../app/draftwise/ui/serve_card.py" line="159" />
      <source>Stop the engine that serves your models (Launch is not affected)</source>
      <translation>モデルをサーブしているエンジンを停止します（「起動」には影響しません）</translation>
    </message>
    <message>
      <location filename="../../app/draftwise/ui/serve_card.py" line="160" />
      <source>Address</source>
      <translation>アドレス</translation>
    </message>
    <message>
      <location filename="../../app/draftwise/ui/serve_card.py" line="161" />
      <source>Where programs send their requests</source>
      <translation>プログラムがリクエストを送る先</translation>
    </message>
    <message>
      <location filename="../../app/draftwise/ui/serve_card.py" line="163" />
      <source>Key</source>
      <translation>キー</translation>
    </message>
    <message>
      <location filename="../../app/draftwise/ui/serve_card.py" line="165" />
      <source>Programs must send this key; without it the engine answers 401</source>
      <translation>プログラムはこのキーを送る必要があります。ないとエンジンは 401 を返します</translation>
    </message>
    <message>
      <location filename="../../app/draftwise/ui/serve_card.py" line="169" />
      <source>Copy this line</source>
      <translation>この行をコピー</translation>
    </message>
    <message>
      <location filename="../../app/draftwise/ui/serve_card.py" line="176" />
      <source>Let idle models sleep after</source>
      <translation>使われていないモデルを休ませるまで</translation>
    </message>
    <message>
      <location filename="../../app/draftwise/ui/serve_card.py" line="177" />
      <source> min</source>
      <translation> 分</translation>
    </message>
    <message>
      <location filename="../../app/draftwise/ui/serve_card.py" line="178" />
      <source>never</source>
      <translation>休ませない</translation>
    </message>
    <message>
      <location filename="../../app/draftwise/ui/serve_card.py" line="179" />
      <source>A model nobody used for this long gives its memory back; the next request wakes it. Takes effect the next time serving starts.</source>
      <translation>この時間使われなかったモデルはメモリーを返し、次のリクエストで目覚めます。次にサーブを始めたときから有効です。</translation>
    </message>
    <message>
      <location filename="../../app/draftwise/ui/serve_card.py" line="183" />
      <source>Start when I log in</source>
      <translation>ログイン時に開始</translation>
    </message>
    <message>
      <location filename="../../app/draftwise/ui/serve_card.py" line="184" />
      <source>Serve your models each time you log in to this computer; Draftwise waits in the tray</source>
      <translation>このコンピューターにログインするたびにモデルをサーブします。Draftwise はトレイで待機します</translation>
    </message>
    <message>
      <location filename="../../app/draftwise/ui/serve_card.py" line="237" />
      <source>Measured on this computer: {0}× as fast with speculation</source>
      <translation>このコンピューターでの測定: 投機的デコードで {0} 倍の速さ</translation>
    </message>
    <message>
      <location filename="../../app/draftwise/ui/serve_card.py" line="238" />
      <source>Not measured on this computer yet</source>
      <translation>このコンピューターではまだ測定していません</translation>
    </message>
    <message>
      <location filename="../../app/draftwise/ui/serve_card.py" line="291" />
      <source>Show the models being served</source>
      <translation>サーブ中のモデルを表示</translation>
    </message>
    <message>
      <location filename="../../app/draftwise/ui/serve_card.py" line="301" />
      <source>Serving {0} models</source>
      <translation>{0} 個のモデルをサーブ中</translation>
    </message>
    <message>
      <location filename="../../app/draftwise/ui/serve_card.py" line="302" />
      <source>Serving 1 model</source>
      <translation>1 個のモデルをサーブ中</translation>
    </message>
    <message>
      <location filename="../../app/draftwise/ui/serve_card.py" line="302" />
      <source>Starting to serve…</source>
      <translation>サーブを開始しています…</translation>
    </message>
    <message>
      <location filename="../../app/draftwise/ui/speculation_card.py" line="107" />
      <source>A small helper model guesses the next words and the big model checks them — same answers, faster.</source>
      <translation>小さな補助モデルが次の言葉を予想し、大きなモデルがそれを確かめます。答えは同じで、より速くなります。</translation>
    </message>
    <message>
      <location filename="../../app/draftwise/ui/speculation_card.py" line="108" />
      <source>Speculative decoding: a draft model, or the model's own MTP head, proposes tokens and the model verifies them in one pass. The text is what the model alone would write.</source>
      <translation>投機的デコーディング：ドラフトモデルまたはモデル自身の MTP ヘッドがトークンを提案し、モデルが一度に検証します。文章はモデル単独で書く場合と同じです。</translation>
    </message>
    <message>
      <location filename="../../app/draftwise/ui/speculation_card.py" line="111" />
      <source>Speed-up:</source>
      <translation>高速化：</translation>
    </message>
    <message>
      <location filename="../../app/draftwise/ui/speculation_card.py" line="112" />
      <source>Auto: use the model's built-in helper (an MTP head) or a small draft model found beside it. Off: the big model works alone.</source>
      <translation>自動：モデルに組み込まれた補助役（MTP ヘッド）か、隣にある小さなドラフトモデルを使います。オフ：大きなモデルだけで動かします。</translation>
    </message>
    <message>
      <location filename="../../app/draftwise/ui/speculation_card.py" line="116" />
      <source>Speculation automatic</source>
      <translation>投機的デコードを自動にする</translation>
    </message>
    <message>
      <location filename="../../app/draftwise/ui/speculation_card.py" line="119" />
      <source>Speculation off</source>
      <translation>投機的デコードをオフにする</translation>
    </message>
    <message>
      <location filename="../../app/draftwise/ui/speculation_card.py" line="120" />
      <source>Run the big model alone: a little slower, same answers</source>
      <translation>大きなモデルだけで動かします：少し遅く、答えは同じです</translation>
    </message>
    <message>
      <location filename="../../app/draftwise/ui/speculation_card.py" line="121" />
      <source>Draft model</source>
      <translation>ドラフトモデル</translation>
    </message>
    <message>
      <location filename="../../app/draftwise/ui/speculation_card.py" line="122" />
      <source>The small helper model: one of the same family that guesses words for the big one. Leave empty and Draftwise looks for one.</source>
      <translation>小さな補助モデル：同じファミリーのモデルで、大きなモデルのために言葉を予想します。空欄なら Draftwise が探します。</translation>
    </message>
    <message>
      <location filename="../../app/draftwise/ui/speculation_card.py" line="124" />
      <source>automatic</source>
      <translation>自動</translation>
    </message>
    <message>
      <location filename="../../app/draftwise/ui/speculation_card.py" line="125" />
      <source>Draft model file</source>
      <translation>ドラフトモデルのファイル</translation>
    </message>
    <message>
      <location filename="../../app/draftwise/ui/speculation_card.py" line="127" />
      <source>Choose a draft model file</source>
      <translation>ドラフトモデルのファイルを選ぶ</translation>
    </message>
    <message>
      <location filename="../../app/draftwise/ui/speculation_card.py" line="129" />
      <source>Try it again</source>
      <translation>もう一度試す</translation>
    </message>
    <message>
      <location filename="../../app/draftwise/ui/speculation_card.py" line="130" />
      <source>Forget that this drafter made the engine fail, and use it at the next Launch</source>
      <translation>このドラフターでエンジンが失敗した記録を消し、次の起動で使います</translation>
    </message>
    <message>
      <location filename="../../app/draftwise/ui/speculation_card.py" line="131" />
      <source>Forget the measurement</source>
      <translation>計測結果を忘れる</translation>
    </message>
    <message>
      <location filename="../../app/draftwise/ui/speculation_card.py" line="132" />
      <source>Decide as if this model had never been measured here (an n-gram speed-up that turned speculation on is turned off)</source>
      <translation>このモデルをここで計測しなかったものとして決めます（計測で投機がオンになった n-gram はオフになります）</translation>
    </message>
    <message>
      <location filename="../../app/draftwise/ui/speculation_card.py" line="174" />
      <source>Choose a draft model</source>
      <translation>ドラフトモデルを選ぶ</translation>
    </message>
    <message>
      <location filename="../../app/draftwise/ui/status_bar.py" line="106" />
      <source>URL copied</source>
      <translation>URL をコピーしました</translation>
    </message>
    <message>
      <location filename="../../app/draftwise/ui/status_bar.py" line="107" />
      <source>API key copied</source>
      <translation>API キーをコピーしました</translation>
    </message>
    <message>
      <location filename="../../app/draftwise/ui/status_bar.py" line="113" />
      <source>Copy the endpoint URL</source>
      <translation>エンドポイント URL をコピー</translation>
    </message>
    <message>
      <location filename="../../app/draftwise/ui/status_bar.py" line="114" />
      <source>Open chat</source>
      <translation>チャットを開く</translation>
    </message>
    <message>
      <location filename="../../app/draftwise/ui/status_bar.py" line="115" />
      <source>Chat with the model in this window</source>
      <translation>このウィンドウでモデルとチャット</translation>
    </message>
    <message>
      <location filename="../../app/draftwise/ui/status_bar.py" line="117" />
      <source>Copy the API key</source>
      <translation>API キーをコピー</translation>
    </message>
    <message>
      <location filename="../../app/draftwise/ui/status_bar.py" line="120" />
      <source>Try a tiny model on this computer's engine and graphics card, and say what works</source>
      <translation>このコンピューターのエンジンとグラフィックカードで小さなモデルを試し、何が動くかを表示します</translation>
    </message>
    <message>
      <location filename="../../app/draftwise/ui/status_bar.py" line="121" />
      <source>Copy the address chat programs and scripts use to talk to the model</source>
      <translation>チャットプログラムやスクリプトがモデルと話すためのアドレスをコピー</translation>
    </message>
    <message>
      <location filename="../../app/draftwise/ui/status_bar.py" line="122" />
      <source>Copy the password (API key) programs need to use the model</source>
      <translation>プログラムがモデルを使うのに必要なパスワード（API キー）をコピー</translation>
    </message>
    <message>
      <location filename="../../app/draftwise/ui/status_bar.py" line="134" />
      <source>The address for chat programs and scripts (OpenAI-compatible API)</source>
      <translation>チャットプログラムやスクリプト用のアドレス（OpenAI 互換 API）</translation>
    </message>
    <message>
      <location filename="../../app/draftwise/ui/status_bar.py" line="135" />
      <source>key {0}</source>
      <translation>キー {0}</translation>
    </message>
    <message>
      <location filename="../../app/draftwise/ui/status_bar.py" line="136" />
      <source>The password (API key) programs send with each request</source>
      <translation>プログラムがリクエストごとに送るパスワード（API キー）</translation>
    </message>
    <message>
      <location filename="../../app/draftwise/ui/status_bar.py" line="140" />
      <source>port {0} was taken</source>
      <translation>ポート {0} は使用中でした</translation>
    </message>
    <message>
      <location filename="../../app/draftwise/ui/status_bar.py" line="198" />
      <source>Dismiss</source>
      <translation>閉じる</translation>
    </message>
    <message>
      <location filename="../../app/draftwise/ui/status_bar.py" line="199" />
      <source>Dismiss this notice</source>
      <translation>このお知らせを閉じる</translation>
    </message>
    <message>
      <location filename="../../app/draftwise/ui/status_bar.py" line="200" />
      <source>Details</source>
      <translation>詳細</translation>
    </message>
    <message>
      <location filename="../../app/draftwise/ui/status_bar.py" line="201" />
      <source>Show the details of this notice</source>
      <translation>この通知の詳細を表示</translation>
    </message>
    <message>
      <location filename="../../app/draftwise/ui/status_bar.py" line="239" />
      <source>Show log</source>
      <translation>ログを表示</translation>
    </message>
    <message>
      <location filename="../../app/draftwise/ui/status_bar.py" line="240" />
      <source>Open the engine's log to see what it said before it stopped</source>
      <translation>エンジンのログを開き、止まる前に何を出力したかを確認します</translation>
    </message>
    <message>
      <location filename="../../app/draftwise/ui/workers_card.py" line="119" />
      <source>Other computers</source>
      <translation>他のコンピューター</translation>
    </message>
    <message>
      <location filename="../../app/draftwise/ui/workers_card.py" line="120" />
      <source>Show other computers</source>
      <translation>他のコンピューターを表示</translation>
    </message>
    <message>
      <location filename="../../app/draftwise/ui/workers_card.py" line="121" />
      <source>Split a model across other computers, or lend this one to them</source>
      <translation>モデルを他のコンピューターに分けて動かすか、このコンピューターを貸し出します</translation>
    </message>
    <message>
      <location filename="../../app/draftwise/ui/workers_card.py" line="122" />
      <source>Use the memory of other computers that run “draftwise share”, or lend this computer to them.</source>
      <translation>「draftwise share」を実行している他のコンピューターのメモリを使うか、このコンピューターを貸し出します。</translation>
    </message>
    <message>
      <location filename="../../app/draftwise/ui/workers_card.py" line="124" />
      <source>host:port of a computer running draftwise share</source>
      <translation>draftwise share を実行しているコンピューターの host:port</translation>
    </message>
    <message>
      <location filename="../../app/draftwise/ui/workers_card.py" line="125" />
      <source>Add</source>
      <translation>追加</translation>
    </message>
    <message>
      <location filename="../../app/draftwise/ui/workers_card.py" line="126" />
      <source>Remove</source>
      <translation>削除</translation>
    </message>
    <message>
      <location filename="../../app/draftwise/ui/workers_card.py" line="127" />
      <source>Check again</source>
      <translation>再確認</translation>
    </message>
    <message>
      <location filename="../../app/draftwise/ui/workers_card.py" line="128" />
      <source>Use them even when this computer alone would be faster</source>
      <translation>このコンピューターだけのほうが速い場合でも使う</translation>
    </message>
    <message>
      <location filename="../../app/draftwise/ui/workers_card.py" line="129" />
      <source>Off: they are used only when the model does not fit here, or when the plan predicts them faster over their link.</source>
      <translation>オフ：モデルがここに収まらないとき、または回線越しでも速くなると予測されたときだけ使います。</translation>
    </message>
    <message>
      <location filename="../../app/draftwise/ui/workers_card.py" line="131" />
      <source>Share this computer</source>
      <translation>このコンピューターを共有</translation>
    </message>
    <message>
      <location filename="../../app/draftwise/ui/workers_card.py" line="132" />
      <source>Other computer's address (host:port)</source>
      <translation>他のコンピューターのアドレス（host:port）</translation>
    </message>
    <message>
      <location filename="../../app/draftwise/ui/workers_card.py" line="133" />
      <source>Address to share this computer on</source>
      <translation>このコンピューターを共有するアドレス</translation>
    </message>
    <message>
      <location filename="../../app/draftwise/ui/workers_card.py" line="134" />
      <source>Port to share this computer on</source>
      <translation>このコンピューターを共有するポート</translation>
    </message>
    <message>
      <location filename="../../app/draftwise/ui/workers_card.py" line="161" />
      <source>Stop sharing</source>
      <translation>共有を停止</translation>
    </message>
    <message>
      <location filename="../../app/draftwise/ui/workers_card.py" line="161" />
      <source>Share</source>
      <translation>共有</translation>
    </message>
    <message>
      <location filename="../../app/draftwise/ui/workers_card.py" line="165" />
      <source>Not sharing</source>
      <translation>共有していません</translation>
    </message>
    <message>
      <location filename="../../app/draftwise/viewmodels/app.py" line="229" />
      <source>{0} is not a .gguf model file.</source>
      <translation>{0} は .gguf モデルファイルではありません。</translation>
    </message>
    <message>
      <location filename="../../app/draftwise/viewmodels/app.py" line="231" />
      <source>{0} does not exist.</source>
      <translation>{0} は存在しません。</translation>
    </message>
    <message>
      <location filename="../../app/draftwise/viewmodels/app.py" line="323" />
      <source>Could not clear the record: {0}</source>
      <translation>記録を消せませんでした: {0}</translation>
    </message>
    <message>
      <location filename="../../app/draftwise/viewmodels/app.py" line="409" />
      <source>Planning…</source>
      <translation>計画中…</translation>
    </message>
    <message>
      <location filename="../../app/draftwise/viewmodels/app.py" line="485" />
      <source>Could not save your settings to {0}: {1}</source>
      <translation>設定を {0} に保存できませんでした: {1}</translation>
    </message>
    <message>
      <location filename="../../app/draftwise/viewmodels/chat.py" line="204" />
      <source>This model continues text — not for chat: it has no chat template, so this is a writing pane. Write the beginning of a text and the model writes on.</source>
      <translation>このモデルは文章の続きを書きます（チャット向けではありません）。チャットテンプレートがないため、ここは執筆画面です。文章の書き出しを書くと、モデルが続きを書きます。</translation>
    </message>
    <message>
      <location filename="../../app/draftwise/viewmodels/chat.py" line="209" />
      <source>Waiting {0}.</source>
      <translation>待機 {0}。</translation>
    </message>
    <message>
      <location filename="../../app/draftwise/viewmodels/chat.py" line="216" />
      <source>{model} is loading. Type your first message now: it goes out as soon as the model is ready.</source>
      <translation>{model} を読み込み中です。最初のメッセージを今入力できます。準備ができしだい送信されます。</translation>
    </message>
    <message>
      <location filename="../../app/draftwise/viewmodels/chat.py" line="217" />
      <source>The model</source>
      <translation>モデル</translation>
    </message>
    <message>
      <location filename="../../app/draftwise/viewmodels/chat.py" line="220" />
      <source>{model} continues text. Write the beginning — a sentence, a letter, a list — and it writes on. Each continuation shows how fast it came.</source>
      <translation>{model} は文章の続きを書きます。書き出し（一文、手紙、リストなど）を書くと続きを書きます。続きごとに速さが表示されます。</translation>
    </message>
    <message>
      <location filename="../../app/draftwise/viewmodels/chat.py" line="222" />
      <source>{model} is ready: ask it something. Each reply shows how fast it came and how much the drafter helped.</source>
      <translation>{model} の準備ができました。質問してください。返答ごとに速さとドラフターの効果が表示されます。</translation>
    </message>
    <message>
      <location filename="../../app/draftwise/viewmodels/chat.py" line="225" />
      <source>Stopping the engine…</source>
      <translation>エンジンを停止しています…</translation>
    </message>
    <message>
      <location filename="../../app/draftwise/viewmodels/chat.py" line="229" />
      <source>Choose a model in the library (or get one), launch it, then ask it something.</source>
      <translation>ライブラリでモデルを選び（または入手し）、起動してから質問してください。</translation>
    </message>
    <message>
      <location filename="../../app/draftwise/viewmodels/chat.py" line="231" />
      <source>The engine was stopped. Launch {model} again to go on.</source>
      <translation>エンジンは停止しました。続けるには {model} をもう一度起動してください。</translation>
    </message>
    <message>
      <location filename="../../app/draftwise/viewmodels/chat.py" line="233" />
      <source>Launch {model}, then write the beginning of a text: it continues text, it does not chat.</source>
      <translation>{model} を起動してから、文章の書き出しを書いてください。このモデルはチャットではなく、文章の続きを書きます。</translation>
    </message>
    <message>
      <location filename="../../app/draftwise/viewmodels/chat.py" line="235" />
      <source>Launch {model}, then ask it something. Each reply shows how fast it came and how much the drafter helped.</source>
      <translation>{model} を起動してから質問してください。返答ごとに速さとドラフターの効果が表示されます。</translation>
    </message>
    <message>
      <location filename="../../app/draftwise/viewmodels/chat.py" line="242" />
      <source>Your text</source>
      <translation>あなたの文章</translation>
    </message>
    <message>
      <location filename="../../app/draftwise/viewmodels/chat.py" line="242" />
      <source>Continuation</source>
      <translation>続き</translation>
    </message>
    <message>
      <location filename="../../app/draftwise/viewmodels/chat.py" line="243" />
      <source>You</source>
      <translation>あなた</translation>
    </message>
    <message>
      <location filename="../../app/draftwise/viewmodels/chat.py" line="247" />
      <source>Write the beginning of a text — Enter continues it, Shift+Enter starts a new line</source>
      <translation>文章の書き出しを入力 — Enter で続きを書かせ、Shift+Enter で改行</translation>
    </message>
    <message>
      <location filename="../../app/draftwise/viewmodels/chat.py" line="248" />
      <source>Type a message — Enter sends, Shift+Enter starts a new line</source>
      <translation>メッセージを入力 — Enter で送信、Shift+Enter で改行</translation>
    </message>
    <message>
      <location filename="../../app/draftwise/viewmodels/chat.py" line="251" />
      <source>Continue</source>
      <translation>続ける</translation>
    </message>
    <message>
      <location filename="../../app/draftwise/viewmodels/chat.py" line="251" />
      <source>Send</source>
      <translation>送信</translation>
    </message>
    <message>
      <location filename="../../app/draftwise/viewmodels/devices.py" line="53" />
      <source>Automatic</source>
      <translation>自動</translation>
    </message>
    <message>
      <location filename="../../app/draftwise/viewmodels/devices.py" line="55" />
      <source>software, slow</source>
      <translation>ソフトウェア、低速</translation>
    </message>
    <message>
      <location filename="../../app/draftwise/viewmodels/drafting.py" line="91" />
      <source>{0:.1f} tokens/s</source>
      <translation>{0:.1f} トークン/秒</translation>
    </message>
    <message>
      <location filename="../../app/draftwise/viewmodels/drafting.py" line="215" />
      <source>Measure how much faster speculation makes this model? About {0}; the model is loaded {1} times and your engine restarted after.</source>
      <translation>投機的デコードでこのモデルがどれだけ速くなるか測定しますか？ 約 {0}。モデルを {1} 回読み込み、その後エンジンを再起動します。</translation>
    </message>
    <message>
      <location filename="../../app/draftwise/viewmodels/drafting.py" line="230" />
      <source>Your requests suggest measuring again: {0}. Measure on your prompts? Your engine is restarted after.</source>
      <translation>あなたのリクエストからは測り直しが勧められます: {0}。あなたのプロンプトで測りますか？ エンジンはその後で再起動されます。</translation>
    </message>
    <message>
      <location filename="../../app/draftwise/viewmodels/drafting.py" line="249" />
      <source>Starting the measurement…</source>
      <translation>測定を開始しています…</translation>
    </message>
    <message>
      <location filename="../../app/draftwise/viewmodels/drafting.py" line="264" />
      <source>Nothing to measure: choose a model first.</source>
      <translation>測定するものがありません。先にモデルを選んでください。</translation>
    </message>
    <message>
      <location filename="../../app/draftwise/viewmodels/drafting.py" line="278" />
      <source>Stopping the measurement…</source>
      <translation>測定を中止しています…</translation>
    </message>
    <message>
      <location filename="../../app/draftwise/viewmodels/drafting.py" line="286" />
      <source>The speed measurements of this model were forgotten.</source>
      <translation>このモデルの速度測定結果を消去しました。</translation>
    </message>
    <message>
      <location filename="../../app/draftwise/viewmodels/drafting.py" line="300" />
      <source>Slower than without speculation: an automatic drafter is left out from now on.</source>
      <translation>投機的デコードなしより遅い結果でした。今後、自動で選ばれたドラフターは使いません。</translation>
    </message>
    <message>
      <location filename="../../app/draftwise/viewmodels/drafting.py" line="305" />
      <source>The measurement failed: {0}</source>
      <translation>測定に失敗しました: {0}</translation>
    </message>
    <message>
      <location filename="../../app/draftwise/viewmodels/engine.py" line="32" />
      <source>Processor</source>
      <translation>プロセッサー</translation>
    </message>
    <message>
      <location filename="../../app/draftwise/viewmodels/engine.py" line="32" />
      <source>Graphics card (CUDA)</source>
      <translation>グラフィックカード（CUDA）</translation>
    </message>
    <message>
      <location filename="../../app/draftwise/viewmodels/engine.py" line="32" />
      <source>Graphics card (ROCm)</source>
      <translation>グラフィックカード（ROCm）</translation>
    </message>
    <message>
      <location filename="../../app/draftwise/viewmodels/engine.py" line="33" />
      <source>Graphics card (Vulkan)</source>
      <translation>グラフィックカード（Vulkan）</translation>
    </message>
    <message>
      <location filename="../../app/draftwise/viewmodels/engine.py" line="33" />
      <source>Apple GPU (Metal)</source>
      <translation>Apple GPU（Metal）</translation>
    </message>
    <message>
      <location filename="../../app/draftwise/viewmodels/engine.py" line="35" />
      <source>from PATH</source>
      <translation>PATH から</translation>
    </message>
    <message>
      <location filename="../../app/draftwise/viewmodels/engine.py" line="35" />
      <source>your own build</source>
      <translation>独自のビルド</translation>
    </message>
    <message>
      <location filename="../../app/draftwise/viewmodels/engine.py" line="86" />
      <source>llama.cpp from {source}, built by Draftwise for this computer</source>
      <translation>{source} の llama.cpp（Draftwise がこのコンピューター用にビルド）</translation>
    </message>
    <message>
      <location filename="../../app/draftwise/viewmodels/engine.py" line="88" />
      <source>llama.cpp {version}</source>
      <translation>llama.cpp {version}</translation>
    </message>
    <message>
      <location filename="../../app/draftwise/viewmodels/engine.py" line="90" />
      <source>llama.cpp, a build that does not say its version</source>
      <translation>llama.cpp（バージョンを示さないビルド）</translation>
    </message>
    <message>
      <location filename="../../app/draftwise/viewmodels/engine.py" line="223" />
      <source>No engine is installed. Press “Install engine” (about 20 minutes, once).</source>
      <translation>エンジンがインストールされていません。「エンジンをインストール」を押してください（初回のみ、約 20 分）。</translation>
    </message>
    <message>
      <location filename="../../app/draftwise/viewmodels/engine.py" line="225" />
      <source>The engine cannot be used: {0}</source>
      <translation>このエンジンは使えません: {0}</translation>
    </message>
    <message>
      <location filename="../../app/draftwise/viewmodels/engine.py" line="230" />
      <source>Installing the engine…</source>
      <translation>エンジンをインストール中…</translation>
    </message>
    <message>
      <location filename="../../app/draftwise/viewmodels/engine.py" line="236" />
      <source>No engine found on this machine.</source>
      <translation>このマシンにエンジンが見つかりません。</translation>
    </message>
    <message>
      <location filename="../../app/draftwise/viewmodels/engine.py" line="252" />
      <source>Preparing…</source>
      <translation>準備中…</translation>
    </message>
    <message>
      <location filename="../../app/draftwise/viewmodels/engine.py" line="271" />
      <source>The engine is installed.</source>
      <translation>エンジンをインストールしました。</translation>
    </message>
    <message>
      <location filename="../../app/draftwise/viewmodels/engine.py" line="278" />
      <source>Installing the engine failed: {0}</source>
      <translation>エンジンのインストールに失敗しました: {0}</translation>
    </message>
    <message>
      <location filename="../../app/draftwise/viewmodels/get_models.py" line="157" />
      <source>Measuring how fast this computer runs models…</source>
      <translation>このコンピューターでモデルがどれくらいの速さで動くか測っています…</translation>
    </message>
    <message>
      <location filename="../../app/draftwise/viewmodels/get_models.py" line="176" />
      <source>Not judged yet: a click searches the hub for {hint}.</source>
      <translation>まだ判断されていません。クリックするとハブで {hint} を検索します。</translation>
    </message>
    <message>
      <location filename="../../app/draftwise/viewmodels/get_models.py" line="178" />
      <source>{repo}: {file} ({size}). A click shows its verdict; Download (or a double click) gets it.</source>
      <translation>{repo}: {file}({size})。クリックで判断結果を表示し、「ダウンロード」(またはダブルクリック)で入手します。</translation>
    </message>
    <message>
      <location filename="../../app/draftwise/viewmodels/get_models.py" line="189" />
      <source>{n} more were not offered (hover for why).</source>
      <translation>ほかに {n} 件は表示していません(理由はポインターを重ねると表示されます)。</translation>
    </message>
    <message>
      <location filename="../../app/draftwise/viewmodels/get_models.py" line="192" />
      <source>Finding the starters on the hub and judging their files…</source>
      <translation>ハブでおすすめを探し、ファイルを判断中…</translation>
    </message>
    <message>
      <location filename="../../app/draftwise/viewmodels/get_models.py" line="207" />
      <source>this computer's speed could not be measured ({error})</source>
      <translation>このコンピューターの速さを測れませんでした({error})</translation>
    </message>
    <message>
      <location filename="../../app/draftwise/viewmodels/get_models.py" line="236" />
      <source>None of the starters could be judged on the hub just now; these are Draftwise's own suggestions, from their usual sizes.</source>
      <translation>いまはハブでどのおすすめも判断できませんでした。Draftwise 独自のおすすめを通常の大きさから表示しています。</translation>
    </message>
    <message>
      <location filename="../../app/draftwise/viewmodels/get_models.py" line="244" />
      <source>The starters could not be judged on the hub ({error}); these are Draftwise's own suggestions, from their usual sizes.</source>
      <translation>ハブでおすすめを判断できませんでした({error})。Draftwise 独自のおすすめを通常の大きさから表示しています。</translation>
    </message>
    <message>
      <location filename="../../app/draftwise/viewmodels/get_models.py" line="270" />
      <source>Loading {repo}…</source>
      <translation>{repo} を読み込み中…</translation>
    </message>
    <message>
      <location filename="../../app/draftwise/viewmodels/get_models.py" line="272" />
      <source>{repo}: the starter's file, judged for this computer. Search the hub for its other files.</source>
      <translation>{repo}: このコンピューター向けに判断したおすすめのファイルです。ほかのファイルはハブで検索してください。</translation>
    </message>
    <message>
      <location filename="../../app/draftwise/viewmodels/get_models.py" line="293" />
      <source>Not judged: {why}</source>
      <translation>判断できません: {why}</translation>
    </message>
    <message>
      <location filename="../../app/draftwise/viewmodels/get_models.py" line="313" />
      <source>Get its vision projector too ({name}, {size}): the model can then see pictures you attach in the chat.</source>
      <translation>視覚プロジェクターも取得する（{name}、{size}）：チャットで添付した画像をモデルが見られるようになります。</translation>
    </message>
    <message>
      <location filename="../../app/draftwise/viewmodels/get_models.py" line="345" />
      <source>Downloading {name}…</source>
      <translation>{name} をダウンロード中…</translation>
    </message>
    <message>
      <location filename="../../app/draftwise/viewmodels/get_models.py" line="362" />
      <source>No GGUF repositories found; try other words.</source>
      <translation>GGUF リポジトリーが見つかりません。別の言葉で試してください。</translation>
    </message>
    <message>
      <location filename="../../app/draftwise/viewmodels/get_models.py" line="399" />
      <source>Downloaded {name} and its helper {helper}.</source>
      <translation>{name} と補助の {helper} をダウンロードしました。</translation>
    </message>
    <message>
      <location filename="../../app/draftwise/viewmodels/get_models.py" line="402" />
      <source>Downloaded {name}.</source>
      <translation>{name} をダウンロードしました。</translation>
    </message>
    <message>
      <location filename="../../app/draftwise/viewmodels/get_models.py" line="412" />
      <source>Stopped. What arrived is kept: Download continues from there.</source>
      <translation>停止しました。受信済みの分は残してあり、次のダウンロードはそこから続きます。</translation>
    </message>
    <message>
      <location filename="../../app/draftwise/viewmodels/get_models.py" line="416" />
      <source>The download failed: {error}</source>
      <translation>ダウンロードに失敗しました: {error}</translation>
    </message>
    <message>
      <location filename="../../app/draftwise/viewmodels/hub_words.py" line="21" />
      <source>Fits</source>
      <translation>収まる</translation>
    </message>
    <message>
      <location filename="../../app/draftwise/viewmodels/hub_words.py" line="21" />
      <source>Fits partly on the graphics card</source>
      <translation>一部がグラフィックカードに収まる</translation>
    </message>
    <message>
      <location filename="../../app/draftwise/viewmodels/hub_words.py" line="22" />
      <source>Too big for this computer</source>
      <translation>このコンピューターには大きすぎます</translation>
    </message>
    <message>
      <location filename="../../app/draftwise/viewmodels/hub_words.py" line="24" />
      <source>Planned from its header as if downloaded: it fits this computer with the context shown.</source>
      <translation>ダウンロードしたものとしてヘッダーから計画しました。表示のコンテキストでこのコンピューターに収まります。</translation>
    </message>
    <message>
      <location filename="../../app/draftwise/viewmodels/hub_words.py" line="25" />
      <source>Planned from its header as if downloaded: part of it runs on the processor, so it runs, but slower.</source>
      <translation>ダウンロードしたものとしてヘッダーから計画しました。一部がプロセッサーで動くため、動きますが遅くなります。</translation>
    </message>
    <message>
      <location filename="../../app/draftwise/viewmodels/hub_words.py" line="27" />
      <source>Planned from its header as if downloaded: even its smallest context does not fit this computer's memory. Choose a smaller file.</source>
      <translation>ダウンロードしたものとしてヘッダーから計画しました。最小のコンテキストでもこのコンピューターのメモリーに収まりません。もっと小さいファイルを選んでください。</translation>
    </message>
    <message>
      <location filename="../../app/draftwise/viewmodels/hub_words.py" line="31" />
      <source>Drafts itself</source>
      <translation>自分で下書き</translation>
    </message>
    <message>
      <location filename="../../app/draftwise/viewmodels/hub_words.py" line="32" />
      <source>Drafts with its MTP assistant</source>
      <translation>MTP アシスタントで下書き</translation>
    </message>
    <message>
      <location filename="../../app/draftwise/viewmodels/hub_words.py" line="33" />
      <source>Faster with its helper {name}</source>
      <translation>補助の {name} で高速</translation>
    </message>
    <message>
      <location filename="../../app/draftwise/viewmodels/hub_words.py" line="34" />
      <source>Drafts from the text so far</source>
      <translation>これまでの文章から下書き</translation>
    </message>
    <message>
      <location filename="../../app/draftwise/viewmodels/hub_words.py" line="35" />
      <source>No drafter</source>
      <translation>ドラフターなし</translation>
    </message>
    <message>
      <location filename="../../app/draftwise/viewmodels/hub_words.py" line="38" />
      <source>Its file holds an MTP head: it guesses its own next words and checks them, so replies come faster with the same answers.</source>
      <translation>ファイルに MTP ヘッドがあります。次の言葉を自分で推測して確かめるので、同じ答えのまま返答が速くなります。</translation>
    </message>
    <message>
      <location filename="../../app/draftwise/viewmodels/hub_words.py" line="40" />
      <source>Its MTP assistant ({name}) comes with it and drafts for it: faster, same answers.</source>
      <translation>MTP アシスタント({name})が一緒に入り、下書きします。速く、答えは同じです。</translation>
    </message>
    <message>
      <location filename="../../app/draftwise/viewmodels/hub_words.py" line="42" />
      <source>A small model of the same family ({name}) comes with it, guesses the next words and the model checks them: faster, same answers.</source>
      <translation>同じ系列の小さなモデル({name})が一緒に入り、次の言葉を推測してモデルが確かめます。速く、答えは同じです。</translation>
    </message>
    <message>
      <location filename="../../app/draftwise/viewmodels/hub_words.py" line="44" />
      <source>No drafter pairs with it; the engine drafts from words already in the conversation.</source>
      <translation>組み合わせられるドラフターはありません。エンジンは会話にすでにある言葉から下書きします。</translation>
    </message>
    <message>
      <location filename="../../app/draftwise/viewmodels/hub_words.py" line="45" />
      <source>No drafter here pairs with it (or one would cost context): it runs on its own.</source>
      <translation>組み合わせられるドラフターがありません(またはコンテキストを削ることになります)。単独で動きます。</translation>
    </message>
    <message>
      <location filename="../../app/draftwise/viewmodels/hub_words.py" line="81" />
      <source>about {rate} tokens a second here</source>
      <translation>この PC で毎秒約 {rate} トークン</translation>
    </message>
    <message>
      <location filename="../../app/draftwise/viewmodels/hub_words.py" line="82" />
      <source>slow: about {rate} tokens a second</source>
      <translation>遅め: 毎秒約 {rate} トークン</translation>
    </message>
    <message>
      <location filename="../../app/draftwise/viewmodels/hub_words.py" line="100" />
      <source>Judged from its header: {read} read from the hub, of {size}.</source>
      <translation>ヘッダーから判断: {size} のうち {read} をハブから読みました。</translation>
    </message>
    <message>
      <location filename="../../app/draftwise/viewmodels/hub_words.py" line="113" />
      <source>{ctx} context</source>
      <translation>コンテキスト {ctx}</translation>
    </message>
    <message>
      <location filename="../../app/draftwise/viewmodels/hub_words.py" line="114" />
      <source>The context the plan gives it here: {n} tokens the model can keep in mind at once.</source>
      <translation>この PC で計画が与えるコンテキスト: モデルが一度に覚えておける {n} トークン。</translation>
    </message>
    <message>
      <location filename="../../app/draftwise/viewmodels/hub_words.py" line="117" />
      <source>What the plan uses in all: the weights, the context (KV cache), the compute buffers, and the drafter and vision projector when they come with it.</source>
      <translation>計画が使う合計: 重み、コンテキスト(KV キャッシュ)、計算バッファー、そして一緒に入る場合はドラフターと画像用プロジェクター。</translation>
    </message>
    <message>
      <location filename="../../app/draftwise/viewmodels/hub_words.py" line="125" />
      <source>Judging…</source>
      <translation>判断中…</translation>
    </message>
    <message>
      <location filename="../../app/draftwise/viewmodels/hub_words.py" line="125" />
      <source>Reading its header from the hub (a few MB at most) to plan it as if it were downloaded.</source>
      <translation>ダウンロードしたものとして計画するため、ハブからヘッダー(多くても数 MB)を読んでいます。</translation>
    </message>
    <message>
      <location filename="../../app/draftwise/viewmodels/hub_words.py" line="130" />
      <source>Helper: runs beside a model</source>
      <translation>補助: モデルの隣で動きます</translation>
    </message>
    <message>
      <location filename="../../app/draftwise/viewmodels/hub_words.py" line="131" />
      <source>A drafter: it guesses a model's next words and cannot answer on its own. Get a model of this repository; its helper comes with it.</source>
      <translation>ドラフターです。モデルの次の言葉を推測するもので、単独では答えられません。このリポジトリーのモデルを入手すると、補助も一緒に入ります。</translation>
    </message>
    <message>
      <location filename="../../app/draftwise/viewmodels/hub_words.py" line="149" />
      <source>Get its MTP assistant too: {name} ({size}) — it drafts for the model: faster, same answers.</source>
      <translation>MTP アシスタントも入手する: {name}({size})— モデルのために下書きします。速く、答えは同じです。</translation>
    </message>
    <message>
      <location filename="../../app/draftwise/viewmodels/hub_words.py" line="151" />
      <source>Get the draft model too: {name} ({size}) — usually 1.5–2× faster, same answers.</source>
      <translation>ドラフトモデルも入手する: {name}({size})— 通常 1.5〜2 倍速く、答えは同じです。</translation>
    </message>
    <message>
      <location filename="../../app/draftwise/viewmodels/i18n.py" line="26" />
      <source>System language</source>
      <translation>システムの言語</translation>
    </message>
    <message>
      <location filename="../../app/draftwise/viewmodels/launch.py" line="165" />
      <source>This build of Draftwise cannot start engines ({error}).</source>
      <translation>この Draftwise のビルドはエンジンを起動できません（{error}）。</translation>
    </message>
    <message>
      <location filename="../../app/draftwise/viewmodels/launch.py" line="166" />
      <source>Reinstall Draftwise.</source>
      <translation>Draftwise を再インストールしてください。</translation>
    </message>
    <message>
      <location filename="../../app/draftwise/viewmodels/launch.py" line="265" />
      <source>Idle</source>
      <translation>待機中</translation>
    </message>
    <message>
      <location filename="../../app/draftwise/viewmodels/launch.py" line="267" />
      <source>Starting… {0}</source>
      <translation>起動中… {0}</translation>
    </message>
    <message>
      <location filename="../../app/draftwise/viewmodels/launch.py" line="269" />
      <source>Loading model… {0}</source>
      <translation>モデルを読み込み中… {0}</translation>
    </message>
    <message>
      <location filename="../../app/draftwise/viewmodels/launch.py" line="273" />
      <source>no progress for {0}; you can stop it.</source>
      <translation>{0} 進展がありません。停止できます。</translation>
    </message>
    <message>
      <location filename="../../app/draftwise/viewmodels/launch.py" line="276" />
      <source> (started in {0})</source>
      <translation>（{0} で起動）</translation>
    </message>
    <message>
      <location filename="../../app/draftwise/viewmodels/launch.py" line="278" />
      <source>Ready</source>
      <translation>準備完了</translation>
    </message>
    <message>
      <location filename="../../app/draftwise/viewmodels/launch.py" line="280" />
      <source>Stopping…</source>
      <translation>停止中…</translation>
    </message>
    <message>
      <location filename="../../app/draftwise/viewmodels/launch.py" line="282" />
      <source>Stopped</source>
      <translation>停止しました</translation>
    </message>
    <message>
      <location filename="../../app/draftwise/viewmodels/launch.py" line="284" />
      <source>Failed — {0}</source>
      <translation>失敗 — {0}</translation>
    </message>
    <message>
      <location filename="../../app/draftwise/viewmodels/launch.py" line="285" />
      <source>Failed</source>
      <translation>失敗</translation>
    </message>
    <message>
      <location filename="../../app/draftwise/viewmodels/launch.py" line="292" />
      <source>Next step: {0}</source>
      <translation>次にすること: {0}</translation>
    </message>
    <message>
      <location filename="../../app/draftwise/viewmodels/launch.py" line="294" />
      <source>From the log: {0}</source>
      <translation>ログより: {0}</translation>
    </message>
    <message>
      <location filename="../../app/draftwise/viewmodels/launch.py" line="301" />
      <source>Lowered to fit in memory: {0}.</source>
      <translation>メモリに収まるよう下げました: {0}。</translation>
    </message>
    <message>
      <location filename="../../app/draftwise/viewmodels/launch.py" line="323" />
      <source>Why: {0}</source>
      <translation>理由：{0}</translation>
    </message>
    <message>
      <location filename="../../app/draftwise/viewmodels/launch_gate.py" line="16" />
      <source>Stop {0} to launch this model.</source>
      <translation>このモデルを起動するには {0} を停止してください。</translation>
    </message>
    <message>
      <location filename="../../app/draftwise/viewmodels/launch_gate.py" line="17" />
      <source>The engine is running.</source>
      <translation>エンジンは実行中です。</translation>
    </message>
    <message>
      <location filename="../../app/draftwise/viewmodels/launch_gate.py" line="19" />
      <source>Choose a model first.</source>
      <translation>先にモデルを選んでください。</translation>
    </message>
    <message>
      <location filename="../../app/draftwise/viewmodels/launch_gate.py" line="21" />
      <source>Reading the model…</source>
      <translation>モデルを読み込み中…</translation>
    </message>
    <message>
      <location filename="../../app/draftwise/viewmodels/launch_gate.py" line="41" />
      <source>The model does not fit in this machine's memory.</source>
      <translation>このモデルはこのマシンのメモリに収まりません。</translation>
    </message>
    <message>
      <location filename="../../app/draftwise/viewmodels/library.py" line="44" />
      <source>Name</source>
      <translation>名前</translation>
    </message>
    <message>
      <location filename="../../app/draftwise/viewmodels/library.py" line="45" />
      <source>Use</source>
      <translation>用途</translation>
    </message>
    <message>
      <location filename="../../app/draftwise/viewmodels/library.py" line="46" />
      <source>Arch</source>
      <translation>アーキ</translation>
    </message>
    <message>
      <location filename="../../app/draftwise/viewmodels/library.py" line="47" />
      <source>Params</source>
      <translation>パラメータ</translation>
    </message>
    <message>
      <location filename="../../app/draftwise/viewmodels/library.py" line="48" />
      <source>Quant</source>
      <translation>量子化</translation>
    </message>
    <message>
      <location filename="../../app/draftwise/viewmodels/library.py" line="55" />
      <source>Architecture</source>
      <translation>アーキテクチャ</translation>
    </message>
    <message>
      <location filename="../../app/draftwise/viewmodels/library.py" line="56" />
      <source>Parameters</source>
      <translation>パラメータ数</translation>
    </message>
    <message>
      <location filename="../../app/draftwise/viewmodels/library.py" line="57" />
      <source>Quantization</source>
      <translation>量子化</translation>
    </message>
    <message>
      <location filename="../../app/draftwise/viewmodels/library.py" line="58" />
      <source>Size on disk</source>
      <translation>ディスク上のサイズ</translation>
    </message>
    <message>
      <location filename="../../app/draftwise/viewmodels/library.py" line="59" />
      <source>Trained context length</source>
      <translation>学習時のコンテキスト長</translation>
    </message>
    <message>
      <location filename="../../app/draftwise/viewmodels/library.py" line="60" />
      <source>What makes answers faster: a built-in MTP head, or a small draft model beside it</source>
      <translation>答えを速くするもの: 内蔵の MTP ヘッド、または隣にある小さなドラフトモデル</translation>
    </message>
    <message>
      <location filename="../../app/draftwise/viewmodels/library.py" line="61" />
      <source>Whether it fits in this machine's memory</source>
      <translation>このマシンのメモリに収まるかどうか</translation>
    </message>
    <message>
      <location filename="../../app/draftwise/viewmodels/library.py" line="71" />
      <source>✓ fits</source>
      <translation>✓ 収まる</translation>
    </message>
    <message>
      <location filename="../../app/draftwise/viewmodels/library.py" line="71" />
      <source>◐ partly</source>
      <translation>◐ 一部</translation>
    </message>
    <message>
      <location filename="../../app/draftwise/viewmodels/library.py" line="71" />
      <source>✗ too big</source>
      <translation>✗ 大きすぎ</translation>
    </message>
    <message>
      <location filename="../../app/draftwise/viewmodels/library.py" line="72" />
      <source>draft</source>
      <translation>ドラフト</translation>
    </message>
    <message>
      <location filename="../../app/draftwise/viewmodels/library.py" line="72" />
      <source>+ drafter</source>
      <translation>＋ドラフト</translation>
    </message>
    <message>
      <location filename="../../app/draftwise/viewmodels/library.py" line="74" />
      <source>Has a built-in MTP head: it guesses several words at once, so answers come faster</source>
      <translation>MTP ヘッドを内蔵しています。一度に複数の言葉を予想するので、答えが速く出ます</translation>
    </message>
    <message>
      <location filename="../../app/draftwise/viewmodels/library.py" line="75" />
      <source>A small draft model of the same family sits beside it: it guesses the next words and this model checks them — same answers, faster</source>
      <translation>同じ系列の小さなドラフトモデルが隣にあります。次の言葉を予想し、このモデルが確かめます — 答えは同じで、より速くなります</translation>
    </message>
    <message>
      <location filename="../../app/draftwise/viewmodels/library.py" line="77" />
      <source>A draft model: it helps a bigger model of its family answer faster; it is not meant to be launched on its own</source>
      <translation>ドラフトモデルです。同じ系列の大きなモデルの回答を速くします。単独で起動するものではありません</translation>
    </message>
    <message>
      <location filename="../../app/draftwise/viewmodels/library.py" line="210" />
      <source>Fits in this machine's memory</source>
      <translation>このマシンのメモリに収まります</translation>
    </message>
    <message>
      <location filename="../../app/draftwise/viewmodels/library.py" line="211" />
      <source>Fits only partly on the GPU: slower</source>
      <translation>GPU には一部しか収まりません: 遅くなります</translation>
    </message>
    <message>
      <location filename="../../app/draftwise/viewmodels/library.py" line="212" />
      <source>Too big for this machine's memory</source>
      <translation>このマシンのメモリには大きすぎます</translation>
    </message>
    <message>
      <location filename="../../app/draftwise/viewmodels/library.py" line="233" />
      <source>unreadable</source>
      <translation>読み取り不可</translation>
    </message>
    <message>
      <location filename="../../app/draftwise/viewmodels/library.py" line="437" />
      <source>Scanning… {0} model</source>
      <translation>スキャン中… {0} 個のモデル</translation>
    </message>
    <message>
      <location filename="../../app/draftwise/viewmodels/library.py" line="437" />
      <source>Scanning… {0} models</source>
      <translation>スキャン中… {0} 個のモデル</translation>
    </message>
    <message>
      <location filename="../../app/draftwise/viewmodels/library.py" line="439" />
      <source>Add a folder with .gguf models, or drop a file here.</source>
      <translation>.gguf モデルのあるフォルダを追加するか、ファイルをここにドロップしてください。</translation>
    </message>
    <message>
      <location filename="../../app/draftwise/viewmodels/library.py" line="441" />
      <source>No models found in these folders.</source>
      <translation>これらのフォルダにモデルは見つかりませんでした。</translation>
    </message>
    <message>
      <location filename="../../app/draftwise/viewmodels/library.py" line="444" />
      <source>{0} of {1} models</source>
      <translation>{1} 個中 {0} 個のモデル</translation>
    </message>
    <message>
      <location filename="../../app/draftwise/viewmodels/library.py" line="445" />
      <source>{0} model</source>
      <translation>{0} 個のモデル</translation>
    </message>
    <message>
      <location filename="../../app/draftwise/viewmodels/library.py" line="445" />
      <source>{0} models</source>
      <translation>{0} 個のモデル</translation>
    </message>
    <message>
      <location filename="../../app/draftwise/viewmodels/machine_check.py" line="70" />
      <source>Check</source>
      <translation>チェック</translation>
    </message>
    <message>
      <location filename="../../app/draftwise/viewmodels/machine_check.py" line="83" />
      <source>Checking this machine…</source>
      <translation>このマシンをチェック中…</translation>
    </message>
    <message>
      <location filename="../../app/draftwise/viewmodels/machine_check.py" line="85" />
      <source>Runs a tiny model on the engine to prove everything works here.</source>
      <translation>小さなモデルをエンジンで動かし、すべてが動作することを確かめます。</translation>
    </message>
    <message>
      <location filename="../../app/draftwise/viewmodels/machine_check.py" line="87" />
      <source>This machine is ready: the engine starts and generates text.</source>
      <translation>このマシンは準備完了です: エンジンが起動し、テキストを生成します。</translation>
    </message>
    <message>
      <location filename="../../app/draftwise/viewmodels/machine_check.py" line="90" />
      <source>The check did not finish.</source>
      <translation>チェックは完了しませんでした。</translation>
    </message>
    <message>
      <location filename="../../app/draftwise/viewmodels/machine_check.py" line="91" />
      <source>Problem at “{0}”: {1}</source>
      <translation>「{0}」で問題: {1}</translation>
    </message>
    <message>
      <location filename="../../app/draftwise/viewmodels/model_details.py" line="15" />
      <source>chat</source>
      <translation>チャット</translation>
    </message>
    <message>
      <location filename="../../app/draftwise/viewmodels/model_details.py" line="15" />
      <source>continues text</source>
      <translation>文章の続き</translation>
    </message>
    <message>
      <location filename="../../app/draftwise/viewmodels/model_details.py" line="15" />
      <source>helper</source>
      <translation>補助</translation>
    </message>
    <message>
      <location filename="../../app/draftwise/viewmodels/model_details.py" line="17" />
      <source>A chat model: it answers what you ask</source>
      <translation>チャットモデルです。質問に答えます</translation>
    </message>
    <message>
      <location filename="../../app/draftwise/viewmodels/model_details.py" line="18" />
      <source>Continues text — not for chat. This file has no chat template: it writes on from what you type instead of answering it</source>
      <translation>文章の続きを書きます — チャット向けではありません。このファイルにはチャットテンプレートがないため、入力に答えるのではなく、その続きを書きます</translation>
    </message>
    <message>
      <location filename="../../app/draftwise/viewmodels/model_details.py" line="74" />
      <source>No model chosen</source>
      <translation>モデルが選ばれていません</translation>
    </message>
    <message>
      <location filename="../../app/draftwise/viewmodels/model_details.py" line="82" />
      <source>This file cannot be used</source>
      <translation>このファイルは使えません</translation>
    </message>
    <message>
      <location filename="../../app/draftwise/viewmodels/model_details.py" line="85" />
      <source>Choose a model on the left, drop a .gguf file here, or press Ctrl+O.</source>
      <translation>左でモデルを選ぶか、.gguf ファイルをここにドロップするか、Ctrl+O を押してください。</translation>
    </message>
    <message>
      <location filename="../../app/draftwise/viewmodels/model_details.py" line="91" />
      <source>{0} ctx</source>
      <translation>コンテキスト {0}</translation>
    </message>
    <message>
      <location filename="../../app/draftwise/viewmodels/model_details.py" line="101" />
      <source>helper — not meant to run on its own</source>
      <translation>補助モデル — 単独で動かすものではありません</translation>
    </message>
    <message>
      <location filename="../../app/draftwise/viewmodels/model_details.py" line="103" />
      <source>continues text — not for chat</source>
      <translation>文章の続きを書くモデル — チャット向きではありません</translation>
    </message>
    <message>
      <location filename="../../app/draftwise/viewmodels/model_details.py" line="115" />
      <source> in {0} files</source>
      <translation>（{0} ファイル）</translation>
    </message>
    <message>
      <location filename="../../app/draftwise/viewmodels/model_details.py" line="116" />
      <source>Layers</source>
      <translation>レイヤー数</translation>
    </message>
    <message>
      <location filename="../../app/draftwise/viewmodels/model_details.py" line="117" />
      <source>Trained context</source>
      <translation>学習時のコンテキスト</translation>
    </message>
    <message>
      <location filename="../../app/draftwise/viewmodels/model_details.py" line="117" />
      <source>{0} tokens</source>
      <translation>{0} トークン</translation>
    </message>
    <message>
      <location filename="../../app/draftwise/viewmodels/model_details.py" line="120" />
      <source>Experts</source>
      <translation>エキスパート</translation>
    </message>
    <message>
      <location filename="../../app/draftwise/viewmodels/model_details.py" line="120" />
      <source>{0} ({1} used per token)</source>
      <translation>{0}（トークンごとに {1} 個を使用）</translation>
    </message>
    <message>
      <location filename="../../app/draftwise/viewmodels/model_details.py" line="122" />
      <source>MTP head</source>
      <translation>MTP ヘッド</translation>
    </message>
    <message>
      <location filename="../../app/draftwise/viewmodels/model_details.py" line="122" />
      <source>yes, built in</source>
      <translation>あり（内蔵）</translation>
    </message>
    <message>
      <location filename="../../app/draftwise/viewmodels/model_details.py" line="122" />
      <source>declared, but not in this file</source>
      <translation>宣言されていますが、このファイルにはありません</translation>
    </message>
    <message>
      <location filename="../../app/draftwise/viewmodels/model_details.py" line="124" />
      <source>Sliding window</source>
      <translation>スライディングウィンドウ</translation>
    </message>
    <message>
      <location filename="../../app/draftwise/viewmodels/model_details.py" line="126" />
      <source>Vocabulary</source>
      <translation>語彙</translation>
    </message>
    <message>
      <location filename="../../app/draftwise/viewmodels/model_details.py" line="128" />
      <source>Vision</source>
      <translation>ビジョン</translation>
    </message>
    <message>
      <location filename="../../app/draftwise/viewmodels/model_details.py" line="139" />
      <source>Missing part(s): {0}. Download them into the same folder.</source>
      <translation>欠けている部分: {0}。同じフォルダにダウンロードしてください。</translation>
    </message>
    <message>
      <location filename="../../app/draftwise/viewmodels/model_details.py" line="141" />
      <source>This is a vision projector (mmproj), not a model; choose the model it belongs to.</source>
      <translation>これはビジョンプロジェクター (mmproj) でモデルではありません。対応するモデルを選んでください。</translation>
    </message>
    <message>
      <location filename="../../app/draftwise/viewmodels/model_details.py" line="143" />
      <source>This file only helps another model draft tokens ({0}); choose the main model and it is found automatically.</source>
      <translation>このファイルは別のモデルのドラフト用です ({0})。メインのモデルを選べば自動で見つかります。</translation>
    </message>
    <message>
      <location filename="../../app/draftwise/viewmodels/plan.py" line="31" />
      <source>model</source>
      <translation>モデル</translation>
    </message>
    <message>
      <location filename="../../app/draftwise/viewmodels/plan.py" line="32" />
      <source>conversation</source>
      <translation>会話</translation>
    </message>
    <message>
      <location filename="../../app/draftwise/viewmodels/plan.py" line="34" />
      <source>working space</source>
      <translation>作業領域</translation>
    </message>
    <message>
      <location filename="../../app/draftwise/viewmodels/plan.py" line="37" />
      <source>The model's weights: its learned numbers, loaded from the file</source>
      <translation>モデルの重み：学習した数値で、ファイルから読み込まれます</translation>
    </message>
    <message>
      <location filename="../../app/draftwise/viewmodels/plan.py" line="38" />
      <source>Room for the conversation the model keeps in mind (the KV cache), set by the context length</source>
      <translation>モデルが覚えている会話のための領域（KV キャッシュ）。コンテキスト長で決まります</translation>
    </message>
    <message>
      <location filename="../../app/draftwise/viewmodels/plan.py" line="39" />
      <source>The helper model that guesses words (the draft model or MTP head) and its own context</source>
      <translation>言葉を予想する補助モデル（ドラフトモデルまたは MTP ヘッド）とそのコンテキスト</translation>
    </message>
    <message>
      <location filename="../../app/draftwise/viewmodels/plan.py" line="40" />
      <source>Scratch memory the engine needs while it works (compute and output buffers)</source>
      <translation>エンジンが処理中に使う作業用メモリ（計算バッファと出力バッファ）</translation>
    </message>
    <message>
      <location filename="../../app/draftwise/viewmodels/plan.py" line="112" />
      <source>RAM</source>
      <translation>RAM</translation>
    </message>
    <message>
      <location filename="../../app/draftwise/viewmodels/plan.py" line="260" />
      <source>{0} (auto)</source>
      <translation>{0}（自動）</translation>
    </message>
    <message>
      <location filename="../../app/draftwise/viewmodels/plan.py" line="266" />
      <source>Partly on the GPU</source>
      <translation>一部 GPU</translation>
    </message>
    <message>
      <location filename="../../app/draftwise/viewmodels/plan.py" line="266" />
      <source>Does not fit</source>
      <translation>収まりません</translation>
    </message>
    <message>
      <location filename="../../app/draftwise/viewmodels/plan.py" line="283" />
      <source>Everything runs on {0} with {1} to spare.</source>
      <translation>すべて {0} で動き、{1} の余裕があります。</translation>
    </message>
    <message>
      <location filename="../../app/draftwise/viewmodels/plan.py" line="285" />
      <source>The model is split between the GPU and RAM, with {0} to spare.</source>
      <translation>モデルは GPU と RAM に分けて置かれ、{0} の余裕があります。</translation>
    </message>
    <message>
      <location filename="../../app/draftwise/viewmodels/plan.py" line="287" />
      <source>Everything fits in RAM with {0} to spare.</source>
      <translation>すべて RAM に収まり、{0} の余裕があります。</translation>
    </message>
    <message>
      <location filename="../../app/draftwise/viewmodels/plan.py" line="288" />
      <source>Room for a {0}-token conversation ({1} KV cache).</source>
      <translation>{0} トークンの会話を保持できます（KV キャッシュ {1}）。</translation>
    </message>
    <message>
      <location filename="../../app/draftwise/viewmodels/plan.py" line="291" />
      <source>The {0} fits as well.</source>
      <translation>{0} も収まります。</translation>
    </message>
    <message>
      <location filename="../../app/draftwise/viewmodels/plan.py" line="299" />
      <source>total</source>
      <translation>合計</translation>
    </message>
    <message>
      <location filename="../../app/draftwise/viewmodels/replan.py" line="113" />
      <source>Could not plan memory: {0}</source>
      <translation>メモリを計画できませんでした: {0}</translation>
    </message>
    <message>
      <location filename="../../app/draftwise/viewmodels/replan.py" line="240" />
      <source>Could not plan: {0}</source>
      <translation>計画できませんでした: {0}</translation>
    </message>
    <message>
      <location filename="../../app/draftwise/viewmodels/replan.py" line="250" />
      <source>The extra arguments cannot be read: {0}.</source>
      <translation>追加引数を読み取れません: {0}。</translation>
    </message>
    <message>
      <location filename="../../app/draftwise/viewmodels/serve.py" line="68" />
      <source>Loaded</source>
      <translation>読み込み済み</translation>
    </message>
    <message>
      <location filename="../../app/draftwise/viewmodels/serve.py" line="69" />
      <source>Loading…</source>
      <translation>読み込み中…</translation>
    </message>
    <message>
      <location filename="../../app/draftwise/viewmodels/serve.py" line="70" />
      <source>Sleeping</source>
      <translation>休止中</translation>
    </message>
    <message>
      <location filename="../../app/draftwise/viewmodels/serve.py" line="71" />
      <source>Not loaded</source>
      <translation>未読み込み</translation>
    </message>
    <message>
      <location filename="../../app/draftwise/viewmodels/serve.py" line="73" />
      <source>Waiting</source>
      <translation>待機中</translation>
    </message>
    <message>
      <location filename="../../app/draftwise/viewmodels/serve.py" line="76" />
      <source>In memory: answers at once</source>
      <translation>メモリー上にあり、すぐに応答します</translation>
    </message>
    <message>
      <location filename="../../app/draftwise/viewmodels/serve.py" line="77" />
      <source>Being read into memory for a request</source>
      <translation>リクエストのためにメモリーへ読み込んでいます</translation>
    </message>
    <message>
      <location filename="../../app/draftwise/viewmodels/serve.py" line="78" />
      <source>Idle for a while, so its memory was given back; the next request wakes it</source>
      <translation>しばらく使われなかったのでメモリーを返しました。次のリクエストで目覚めます</translation>
    </message>
    <message>
      <location filename="../../app/draftwise/viewmodels/serve.py" line="79" />
      <source>Not in memory: it starts when a program asks for it by name</source>
      <translation>メモリーにありません。プログラムが名前で求めると起動します</translation>
    </message>
    <message>
      <location filename="../../app/draftwise/viewmodels/serve.py" line="80" />
      <source>It could not start; the other models keep serving</source>
      <translation>起動できませんでした。ほかのモデルはサーブを続けます</translation>
    </message>
    <message>
      <location filename="../../app/draftwise/viewmodels/serve.py" line="81" />
      <source>The engine has not listed it yet</source>
      <translation>エンジンがまだ一覧に載せていません</translation>
    </message>
    <message>
      <location filename="../../app/draftwise/viewmodels/serve.py" line="197" />
      <source>Serving needs the llama.cpp engine: install it first (Engine menu).</source>
      <translation>サーブには llama.cpp エンジンが必要です。先にインストールしてください（エンジンメニュー）。</translation>
    </message>
    <message>
      <location filename="../../app/draftwise/viewmodels/serve.py" line="199" />
      <source>Looking at this computer…</source>
      <translation>このコンピューターを調べています…</translation>
    </message>
    <message>
      <location filename="../../app/draftwise/viewmodels/serve.py" line="201" />
      <source>Add a folder of models to the library first.</source>
      <translation>先にモデルのフォルダーをライブラリに追加してください。</translation>
    </message>
    <message>
      <location filename="../../app/draftwise/viewmodels/serve.py" line="207" />
      <source>Getting your models ready…</source>
      <translation>モデルを準備しています…</translation>
    </message>
    <message>
      <location filename="../../app/draftwise/viewmodels/serve.py" line="209" />
      <source>Not serving.</source>
      <translation>サーブしていません。</translation>
    </message>
    <message>
      <location filename="../../app/draftwise/viewmodels/serve.py" line="212" />
      <source>Serving {0} models. Programs pick one by its name.</source>
      <translation>{0} 個のモデルをサーブ中です。プログラムは名前でモデルを選びます。</translation>
    </message>
    <message>
      <location filename="../../app/draftwise/viewmodels/serve.py" line="213" />
      <source>Serving 1 model. Programs pick it by its name.</source>
      <translation>1 個のモデルをサーブ中です。プログラムは名前でモデルを選びます。</translation>
    </message>
    <message>
      <location filename="../../app/draftwise/viewmodels/serve.py" line="216" />
      <source>Serving stopped: {0}</source>
      <translation>サーブが止まりました: {0}</translation>
    </message>
    <message>
      <location filename="../../app/draftwise/viewmodels/serve.py" line="217" />
      <source>Serving stopped.</source>
      <translation>サーブが止まりました。</translation>
    </message>
    <message>
      <location filename="../../app/draftwise/viewmodels/serve.py" line="218" />
      <source>Starting the engine…</source>
      <translation>エンジンを起動しています…</translation>
    </message>
    <message>
      <location filename="../../app/draftwise/viewmodels/serve.py" line="270" />
      <source>{0} tokens/s</source>
      <translation>{0} トークン/秒</translation>
    </message>
    <message>
      <location filename="../../app/draftwise/viewmodels/serve.py" line="272" />
      <source>{0} % of drafts accepted</source>
      <translation>ドラフトの {0} % を採用</translation>
    </message>
    <message>
      <location filename="../../app/draftwise/viewmodels/serve.py" line="344" />
      <source>Your models could not be planned: {0}</source>
      <translation>モデルの計画を立てられませんでした: {0}</translation>
    </message>
    <message>
      <location filename="../../app/draftwise/viewmodels/serve.py" line="438" />
      <source>The engine's model list could not be written ({0}): {1}</source>
      <translation>エンジンのモデル一覧を書き込めませんでした（{0}）: {1}</translation>
    </message>
    <message>
      <location filename="../../app/draftwise/viewmodels/serve.py" line="481" />
      <source>Could not change the start at login ({0}): {1}</source>
      <translation>ログイン時の開始を変更できませんでした（{0}）: {1}</translation>
    </message>
    <message>
      <location filename="../../app/draftwise/viewmodels/speculation.py" line="96" />
      <source>Measured on this computer: {0}× with {1} ({2}).</source>
      <translation>このコンピューターでの計測: {1} で {0}×（{2}）。</translation>
    </message>
    <message>
      <location filename="../../app/draftwise/viewmodels/speculation.py" line="98" />
      <source>Measured on this computer: {0}× with {1}.</source>
      <translation>このコンピューターでの計測: {1} で {0}×。</translation>
    </message>
    <message>
      <location filename="../../app/draftwise/viewmodels/speculation.py" line="114" />
      <source>Leave empty: Draftwise uses the model's built-in helper, or a draft model found beside it.</source>
      <translation>空欄のまま：Draftwise はモデルに組み込まれた補助役か、隣にあるドラフトモデルを使います。</translation>
    </message>
    <message>
      <location filename="../../app/draftwise/viewmodels/speculation.py" line="115" />
      <source>OK — {0}</source>
      <translation>OK — {0}</translation>
    </message>
    <message>
      <location filename="../../app/draftwise/viewmodels/speculation.py" line="121" />
      <source>Speculative type: {0}</source>
      <translation>投機デコードの種類: {0}</translation>
    </message>
    <message>
      <location filename="../../app/draftwise/viewmodels/speculation.py" line="142" />
      <source>Cannot start like this: {0}</source>
      <translation>このままでは起動できません: {0}</translation>
    </message>
    <message>
      <location filename="../../app/draftwise/viewmodels/speculation.py" line="146" />
      <source>Deciding…</source>
      <translation>判定中…</translation>
    </message>
    <message>
      <location filename="../../app/draftwise/viewmodels/speculation.py" line="149" />
      <source>Speculation is off, as you chose.</source>
      <translation>選択どおり、投機的デコードはオフです。</translation>
    </message>
    <message>
      <location filename="../../app/draftwise/viewmodels/speculation.py" line="153" />
      <source>The engine could not start with the helper model just now, so it runs without speculation.</source>
      <translation>たった今、補助モデルではエンジンを起動できなかったため、推測なしで動いています。</translation>
    </message>
    <message>
      <location filename="../../app/draftwise/viewmodels/speculation.py" line="155" />
      <source>A helper model was left out because the engine could not start with it last time: the model runs without speculation.</source>
      <translation>前回、補助モデルではエンジンを起動できなかったため、外しました。モデルは推測なしで動きます。</translation>
    </message>
    <message>
      <location filename="../../app/draftwise/viewmodels/speculation.py" line="161" />
      <source>{0} is beside the model but cannot draft for it: {1}. The model runs without speculation.</source>
      <translation>{0} はモデルの隣にありますが、このモデルのドラフトには使えません: {1}。モデルは推測なしで動きます。</translation>
    </message>
    <message>
      <location filename="../../app/draftwise/viewmodels/speculation.py" line="163" />
      <source>No draft model found: the model runs without speculation.</source>
      <translation>ドラフトモデルが見つかりません。モデルは推測なしで動きます。</translation>
    </message>
    <message>
      <location filename="../../app/draftwise/viewmodels/speculation.py" line="167" />
      <source>This model has its own helper built in (an MTP head): speculation on.</source>
      <translation>このモデルには補助役が組み込まれています（MTP ヘッド）：推測オン。</translation>
    </message>
    <message>
      <location filename="../../app/draftwise/viewmodels/speculation.py" line="169" />
      <source>Found {0} beside the model: speculation on ({1}).</source>
      <translation>モデルの隣に {0} が見つかりました: 投機的デコードはオンです ({1})。</translation>
    </message>
    <message>
      <location filename="../../app/draftwise/viewmodels/speculation.py" line="171" />
      <source>Using your draft model {0} ({1}).</source>
      <translation>指定されたドラフトモデル {0} を使います ({1})。</translation>
    </message>
    <message>
      <location filename="../../app/draftwise/viewmodels/speculation.py" line="173" />
      <source>Your own --spec-type {0} is used.</source>
      <translation>指定された --spec-type {0} を使います。</translation>
    </message>
    <message>
      <location filename="../../app/draftwise/viewmodels/speculation.py" line="174" />
      <source>Speculation on: {0}.</source>
      <translation>投機的デコードはオン: {0}。</translation>
    </message>
    <message>
      <location filename="../../app/draftwise/viewmodels/speculation.py" line="207" />
      <source>Fix the draft model first (see the message under the field).</source>
      <translation>先にドラフトモデルを直してください (欄の下の説明を参照)。</translation>
    </message>
    <message>
      <location filename="../../app/draftwise/viewmodels/workers.py" line="119" />
      <source>Went away during the last run; Launch runs without it. Check again when it is back.</source>
      <translation>前回の実行中に応答しなくなりました。起動はこのコンピューターなしで行います。戻ったら再確認してください。</translation>
    </message>
    <message>
      <location filename="../../app/draftwise/viewmodels/workers.py" line="182" />
      <source>No engine is installed to ask this computer.</source>
      <translation>このコンピューターに問い合わせるエンジンがインストールされていません。</translation>
    </message>
    <message>
      <location filename="../../app/draftwise/viewmodels/workers.py" line="185" />
      <source>Checking…</source>
      <translation>確認中…</translation>
    </message>
    <message>
      <location filename="../../app/draftwise/viewmodels/workers.py" line="211" />
      <source>{free} free</source>
      <translation>空き {free}</translation>
    </message>
    <message>
      <location filename="../../app/draftwise/viewmodels/workers.py" line="252" />
      <source>ggml-rpc-server is not installed beside the engine; reinstall the engine.</source>
      <translation>エンジンの隣に ggml-rpc-server がありません。エンジンを入れ直してください。</translation>
    </message>
    <message>
      <location filename="../../app/draftwise/viewmodels/workers.py" line="264" />
      <source>Starting…</source>
      <translation>起動中…</translation>
    </message>
    <message>
      <location filename="../../app/draftwise/viewmodels/workers.py" line="279" />
      <source>Sharing on {endpoint}</source>
      <translation>{endpoint} で共有中</translation>
    </message>
    <message>
      <location filename="../../app/draftwise/viewmodels/workers.py" line="288" />
      <source>in use by {computers}</source>
      <translation>{computers} が使用中</translation>
    </message>
    <message>
      <location filename="../../app/draftwise/viewmodels/workers.py" line="294" />
      <source>Sharing failed: {why}</source>
      <translation>共有に失敗しました: {why}</translation>
    </message>
    <message>
      <source>  (draft model)</source>
      <translation type="vanished">  （ドラフトモデル）</translation>
    </message>
    <message>
      <source>  + draft model</source>
      <translation type="vanished">  ＋ドラフトモデル</translation>
    </message>
    <message>
      <source>(slow here)</source>
      <translation type="vanished">（この PC では遅め）</translation>
    </message>
    <message>
      <source>A capable all-rounder for 16 GB computers.</source>
      <translation type="vanished">16 GB のコンピューター向けの有能な万能型。</translation>
    </message>
    <message>
      <source>A drafter was left out because the engine could not start with it last time: the model runs without speculation.</source>
      <translation type="vanished">前回このドラフターではエンジンが起動できなかったため外しました。モデルは投機デコードなしで動きます。</translation>
    </message>
    <message>
      <source>BOS token id</source>
      <translation type="vanished">BOS トークン ID</translation>
    </message>
    <message>
      <source>Built-in MTP head (faster generation)</source>
      <translation type="vanished">内蔵の MTP ヘッド（生成が速くなります）</translation>
    </message>
    <message>
      <source>Could not clear the record of lowered settings.</source>
      <translation type="vanished">下げた設定の記録を消せませんでした。</translation>
    </message>
    <message>
      <source>Could not read the broken-drafter record {path}: {error}.</source>
      <translation type="vanished">動かなかったドラフターの記録 {path} を読み込めませんでした: {error}。</translation>
    </message>
    <message>
      <source>Could not read the record of lowered settings {path}: {error}.</source>
      <translation type="vanished">下げた設定の記録 {path} を読み込めませんでした: {error}。</translation>
    </message>
    <message>
      <source>Downloaded {name} and its draft model.</source>
      <translation type="vanished">{name} とそのドラフトモデルをダウンロードしました。</translation>
    </message>
    <message>
      <source>Draftwise cannot plan {flag}; remove it (use -ngl to keep layers off the GPU).</source>
      <translation type="vanished">Draftwise は {flag} を計画できません。削除してください（レイヤーを GPU から外すには -ngl を使います）。</translation>
    </message>
    <message>
      <source>Draftwise cannot start {0} yet; choose a llama.cpp engine.</source>
      <translation type="vanished">Draftwise はまだ {0} を起動できません。llama.cpp エンジンを選んでください。</translation>
    </message>
    <message>
      <source>Draftwise places the model's tensors itself and cannot plan {flag}; remove it (use -ngl or --n-cpu-moe to keep part of the model off the GPU).</source>
      <translation type="vanished">Draftwise はモデルのテンソルを自分で配置するため、{flag} は計画できません。削除してください（モデルの一部を GPU から外すには -ngl か --n-cpu-moe を使います）。</translation>
    </message>
    <message>
      <source>EOS token id</source>
      <translation type="vanished">EOS トークン ID</translation>
    </message>
    <message>
      <source>Engine settings: the engine's own were the fastest of {n} measured here.</source>
      <translation type="vanished">エンジン設定: このコンピューターで測定した {n} 通りのうち、エンジン既定の設定が最速でした。</translation>
    </message>
    <message>
      <source>Engine start</source>
      <translation type="vanished">エンジンの起動</translation>
    </message>
    <message>
      <source>Engine stop</source>
      <translation type="vanished">エンジンの停止</translation>
    </message>
    <message>
      <source>Estimated roughly: the exact planner is not available in this build.</source>
      <translation type="vanished">おおよその見積もりです: このビルドには正確なプランナーがありません。</translation>
    </message>
    <message>
      <source>Fits only with part of it on the processor: it runs, but slower.</source>
      <translation type="vanished">一部をプロセッサーに置けば収まります。動きますが、遅くなります。</translation>
    </message>
    <message>
      <source>Fits this computer</source>
      <translation type="vanished">このコンピューターに収まります</translation>
    </message>
    <message>
      <source>Fits this computer's memory, with room for a few thousand words of context.</source>
      <translation type="vanished">このコンピューターのメモリーに収まり、数千語の文脈を扱う余裕があります。</translation>
    </message>
    <message>
      <source>Fits, partly on the processor (slower)</source>
      <translation type="vanished">収まります（一部はプロセッサーで動くため遅くなります）</translation>
    </message>
    <message>
      <source>Fits?</source>
      <translation type="vanished">収まる？</translation>
    </message>
    <message>
      <source>GPU</source>
      <translation type="vanished">GPU</translation>
    </message>
    <message>
      <source>Generation</source>
      <translation type="vanished">生成</translation>
    </message>
    <message>
      <source>Google's Gemma 3: good writing, many languages.</source>
      <translation type="vanished">Google の Gemma 3: 文章が上手で、多くの言語に対応。</translation>
    </message>
    <message>
      <source>Has a built-in MTP head: faster with speculative decoding</source>
      <translation type="vanished">MTP ヘッド内蔵: 投機的デコードで速くなります</translation>
    </message>
    <message>
      <source>It drafts {n} tokens at a time and stops at p-min {p}, as reported for {family}'s MTP, until Draftwise measures it here.</source>
      <translation type="vanished">{family} の MTP で報告されているとおり、一度に {n} トークンを下書きし、p-min {p} で止めます (Draftwise がここで測定するまで)。</translation>
    </message>
    <message>
      <source>It needs about {0} but {1} is free.</source>
      <translation type="vanished">約 {0} 必要ですが、空きは {1} です。</translation>
    </message>
    <message>
      <source>KV cache</source>
      <translation type="vanished">KV キャッシュ</translation>
    </message>
    <message>
      <source>Launch a model, then ask it something. Each reply shows how fast it came and how much the drafter helped.</source>
      <translation type="vanished">モデルを起動して質問してください。返答ごとに速さとドラフターの効果が表示されます。</translation>
    </message>
    <message>
      <source>Leave empty: Draftwise looks for an MTP head or a draft model beside the model.</source>
      <translation type="vanished">空欄のままにすると、Draftwise が MTP ヘッドまたはモデルの隣にあるドラフトモデルを探します。</translation>
    </message>
    <message>
      <source>MTP</source>
      <translation type="vanished">MTP</translation>
    </message>
    <message>
      <source>MTP / draft:</source>
      <translation type="vanished">MTP / ドラフト:</translation>
    </message>
    <message>
      <source>MTP auto works: the head drafted {drafted} tokens (random weights accept none; a real model accepts many)</source>
      <translation type="vanished">MTP の自動設定は動作しています: ヘッドが {drafted} トークンを下書きしました（ランダムな重みでは一つも採用されませんが、実際のモデルでは多くが採用されます）</translation>
    </message>
    <message>
      <source>MTP head found in the model: speculation on.</source>
      <translation type="vanished">モデルに MTP ヘッドがあります: 投機的デコードはオンです。</translation>
    </message>
    <message>
      <source>Missing: {0}</source>
      <translation type="vanished">見つかりません: {0}</translation>
    </message>
    <message>
      <source>No drafter found: the model runs without speculation.</source>
      <translation type="vanished">ドラフターが見つかりません: 投機的デコードなしで実行します。</translation>
    </message>
    <message>
      <source>No models yet.

Add a folder with .gguf models,
or drop a .gguf file on this window.</source>
      <translation type="vanished">まだモデルがありません。

.gguf モデルのあるフォルダを追加するか、
.gguf ファイルをこのウィンドウにドロップしてください。</translation>
    </message>
    <message>
      <source>Not a GGUF model: {0}</source>
      <translation type="vanished">GGUF モデルではありません: {0}</translation>
    </message>
    <message>
      <source>Not a file: {0}</source>
      <translation type="vanished">ファイルではありません: {0}</translation>
    </message>
    <message>
      <source>OK — {0} ({1})</source>
      <translation type="vanished">OK — {0} ({1})</translation>
    </message>
    <message>
      <source>Open the chat page in the browser</source>
      <translation type="vanished">ブラウザでチャットページを開く</translation>
    </message>
    <message>
      <source>Partly on CPU</source>
      <translation type="vanished">一部をCPUで</translation>
    </message>
    <message>
      <source>Pick a starter model for this computer, or search the model hub. Models go into {folder} and appear in your library.</source>
      <translation type="vanished">このコンピューター向けのおすすめから選ぶか、モデルハブを検索してください。モデルは {folder} に保存され、ライブラリーに表示されます。</translation>
    </message>
    <message>
      <source>Planned vs actual (the engine's own buffer sizes)</source>
      <translation type="vanished">計画と実際（エンジン自身が報告したバッファサイズ）</translation>
    </message>
    <message>
      <source>Small and quick: everyday questions on almost any computer.</source>
      <translation type="vanished">小さくて速い: ほとんどのコンピューターで日常の質問に。</translation>
    </message>
    <message>
      <source>Speculation was turned off: {0}</source>
      <translation type="vanished">投機的デコードをオフにしました: {0}</translation>
    </message>
    <message>
      <source>Starters for this computer, fastest readable first</source>
      <translation type="vanished">このコンピューター向けのおすすめ（読める速さで一番大きいものが先頭）</translation>
    </message>
    <message>
      <source>Stronger answers; wants 24 GB or a big GPU.</source>
      <translation type="vanished">より優れた答え。24 GB か大きな GPU が必要です。</translation>
    </message>
    <message>
      <source>Test model</source>
      <translation type="vanished">テスト用モデル</translation>
    </message>
    <message>
      <source>The CPU's AMX kernels stopped with an illegal instruction on this computer; the engine starts again without them (-nr), and this model keeps them off.</source>
      <translation type="vanished">このコンピューターでは CPU の AMX カーネルが不正な命令で止まりました。AMX を使わずに（-nr）エンジンを起動し直し、このモデルでは今後も使いません。</translation>
    </message>
    <message>
      <source>The broken-drafter record was damaged ({error}); it was set aside as {name} and a new one is started.</source>
      <translation type="vanished">動かなかったドラフターの記録が壊れていました（{error}）。{name} として退避し、新しい記録を始めます。</translation>
    </message>
    <message>
      <source>The broken-drafter record {path} is damaged ({error}) and could not be moved: {move_error}.</source>
      <translation type="vanished">動かなかったドラフターの記録 {path} が壊れていて（{error}）、退避もできませんでした: {move_error}。</translation>
    </message>
    <message>
      <source>The context of {want} is above the {trained} this model was trained for; answers may degrade past that.</source>
      <translation type="vanished">コンテキスト {want} は、このモデルが学習した {trained} を超えています。それより長くなると回答の質が落ちることがあります。</translation>
    </message>
    <message>
      <source>The engine failed to start with {what} ({cause}); starting it again without speculation.</source>
      <translation type="vanished">{what}を使うとエンジンが起動できませんでした（{cause}）。投機的デコードなしで起動し直します。</translation>
    </message>
    <message>
      <source>The largest model that still writes at least about 8 tokens a second here comes first; slower ones are below it.</source>
      <translation type="vanished">このコンピューターで毎秒約 8 トークン以上書ける中で一番大きいモデルが先頭です。それより遅いものは下に並びます。</translation>
    </message>
    <message>
      <source>The last {0} prompts per model, never sent anywhere: Draftwise measures speculation again on them when your requests suggest another setting is faster. Unchecking deletes the ones kept.</source>
      <translation type="vanished">モデルごとに直近 {0} 件のプロンプト（どこにも送信されません）。あなたのリクエストから別の設定の方が速いと見られるとき、Draftwise はこれらで投機的デコードを測定し直します。チェックを外すと保存済みのものは削除されます。</translation>
    </message>
    <message>
      <source>The record of lowered settings was damaged ({error}); it was set aside as {name}, and the next launch starts with the full settings.</source>
      <translation type="vanished">下げた設定の記録が壊れていました（{error}）。{name} として退避し、次の起動は本来の設定で始めます。</translation>
    </message>
    <message>
      <source>The record of lowered settings {path} is damaged ({error}) and could not be moved: {move_error}.</source>
      <translation type="vanished">下げた設定の記録 {path} が壊れていて（{error}）、移動できませんでした: {move_error}。</translation>
    </message>
    <message>
      <source>This build of Draftwise cannot start engines ({0}).</source>
      <translation type="vanished">この Draftwise のビルドはエンジンを起動できません ({0})。</translation>
    </message>
    <message>
      <source>This is a {backend} build but the engine runs on the CPU ({failure}): it is much slower. Check the GPU driver, or choose which GPUs to use.</source>
      <translation type="vanished">これは {backend} 版ですが、エンジンは CPU で動いています（{failure}）: とても遅くなります。GPU ドライバーを確かめるか、使う GPU を選んでください。</translation>
    </message>
    <message>
      <source>This is a {backend} build but the engine runs on the CPU: it is much slower. Check the GPU driver, or choose which GPUs to use.</source>
      <translation type="vanished">これは {backend} 版ですが、エンジンは CPU で動いています: とても遅くなります。GPU ドライバーを確かめるか、使う GPU を選んでください。</translation>
    </message>
    <message>
      <source>This is the model itself; choose a smaller draft model.</source>
      <translation type="vanished">これはモデル自身です。より小さなドラフトモデルを選んでください。</translation>
    </message>
    <message>
      <source>This model continues text — not for chat: it has no chat template, so it writes on from your message instead of answering it.</source>
      <translation type="vanished">このモデルは文章の続きを書くもので、チャット向けではありません。チャットテンプレートがないため、メッセージに答えるのではなく、その続きを書きます。</translation>
    </message>
    <message>
      <source>Too big</source>
      <translation type="vanished">大きすぎます</translation>
    </message>
    <message>
      <source>Too big for this computer's memory; choose a smaller file.</source>
      <translation type="vanished">このコンピューターのメモリーには大きすぎます。小さいファイルを選んでください。</translation>
    </message>
    <message>
      <source>Vocabulary differs: {0}. A draft must come from the same model family.</source>
      <translation type="vanished">語彙が異なります: {0}。ドラフトは同じモデルファミリーのものが必要です。</translation>
    </message>
    <message>
      <source>Writes and explains code.</source>
      <translation type="vanished">コードを書いて説明します。</translation>
    </message>
    <message>
      <source>about {rate} tokens/s</source>
      <translation type="vanished">約 {rate} トークン/秒</translation>
    </message>
    <message>
      <source>context</source>
      <translation type="vanished">コンテキスト</translation>
    </message>
    <message>
      <source>drafter</source>
      <translation type="vanished">ドラフター</translation>
    </message>
    <message>
      <source>its architecture ({draft_arch}) differs from the model's ({arch})</source>
      <translation type="vanished">アーキテクチャ（{draft_arch}）がモデル（{arch}）と違います</translation>
    </message>
    <message>
      <source>its vocabulary differs ({difference})</source>
      <translation type="vanished">語彙が違います（{difference}）</translation>
    </message>
    <message>
      <source>llama.cpp {version} ({backend}, {source}) {binary}</source>
      <translation type="vanished">llama.cpp {version}（{backend}、{source}）{binary}</translation>
    </message>
    <message>
      <source>no usable llama-server ({why}). Run `draftwise engine install` (about 20 minutes, once).</source>
      <translation type="vanished">使える llama-server がありません（{why}）。`draftwise engine install` を実行してください（初回のみ、約 20 分）。</translation>
    </message>
    <message>
      <source>pre-tokenizer</source>
      <translation type="vanished">プリトークナイザー</translation>
    </message>
    <message>
      <source>ready in {seconds} s at {url}</source>
      <translation type="vanished">{seconds} 秒で準備完了（{url}）</translation>
    </message>
    <message>
      <source>stopped (exit code {code}), nothing left running</source>
      <translation type="vanished">停止しました（終了コード {code}）。動いたまま残ったものはありません</translation>
    </message>
    <message>
      <source>the engine uses {devices}</source>
      <translation type="vanished">エンジンは {devices} を使っています</translation>
    </message>
    <message>
      <source>this engine is a CPU build; models run on the processor</source>
      <translation type="vanished">このエンジンは CPU 版です。モデルはプロセッサーで動きます</translation>
    </message>
    <message>
      <source>this is a {backend} build but it did not use a GPU; check the driver</source>
      <translation type="vanished">{backend} 版ですが GPU を使いませんでした。ドライバーを確認してください</translation>
    </message>
    <message>
      <source>token list (same size, different tokens)</source>
      <translation type="vanished">トークン一覧（数は同じでも中身が違います）</translation>
    </message>
    <message>
      <source>token {id} exists only in the model and is not padding: the engine would stop mid-reply the first time the model writes it (the draft's vocabulary ends at {size})</source>
      <translation type="vanished">トークン {id} はモデルにしかなく、パディングでもありません。モデルがこれを出力した時点でエンジンが応答の途中で止まります（ドラフトの語彙は {size} で終わります）</translation>
    </message>
    <message>
      <source>tokenizer model</source>
      <translation type="vanished">トークナイザーの種類</translation>
    </message>
    <message>
      <source>vocabulary size</source>
      <translation type="vanished">語彙数</translation>
    </message>
    <message>
      <source>weights</source>
      <translation type="vanished">重み</translation>
    </message>
    <message>
      <source>with {what}</source>
      <translation type="vanished">{what}あり</translation>
    </message>
    <message>
      <source>with {what}, draft length {n}</source>
      <translation type="vanished">{what}あり、ドラフト長 {n}</translation>
    </message>
    <message>
      <source>work</source>
      <translation type="vanished">作業領域</translation>
    </message>
    <message>
      <source>{0} context, {1} KV cache.</source>
      <translation type="vanished">コンテキスト {0}、KV キャッシュ {1}。</translation>
    </message>
    <message>
      <source>{arch}, {layers} layers, {kib} KiB at {path}</source>
      <translation type="vanished">{arch}、{layers} 層、{kib} KiB（{path}）</translation>
    </message>
    <message>
      <source>{field} ({draft} in the draft, {model} in the model)</source>
      <translation type="vanished">{field}（ドラフトは {draft}、モデルは {model}）</translation>
    </message>
    <message>
      <source>{name} does not share the model's vocabulary: its {difference} differs. A draft must come from the same model family.</source>
      <translation type="vanished">{name} はモデルと語彙が違います（{difference} が異なります）。ドラフトモデルは同じモデルファミリーのものを使ってください。</translation>
    </message>
    <message>
      <source>{setup} is still the fastest on your requests: {ratio}× (measured again on {n} of them)</source>
      <translation type="vanished">あなたのリクエストでも {setup} が最速です: {ratio}×（そのうち {n} 件で測り直しました）</translation>
    </message>
    <message>
      <source>{tokens} tokens (random weights: the words are nonsense)</source>
      <translation type="vanished">{tokens} トークン（ランダムな重みなので文章は意味をなしません）</translation>
    </message>
    <message>
      <source>{tokens} tokens at {speed} tokens/s (random weights: the words are nonsense)</source>
      <translation type="vanished">{tokens} トークン、毎秒 {speed} トークン（ランダムな重みなので文章は意味をなしません）</translation>
    </message>
    <message>
      <source>{what} made the engine stop while it was serving ({cause}); starting it again without speculation.</source>
      <translation type="vanished">{what} が動作中のエンジンを止めました（{cause}）。投機的デコーディングなしで起動し直します。</translation>
    </message>
  </context>
</TS>
